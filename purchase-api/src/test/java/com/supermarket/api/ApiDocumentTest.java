package com.supermarket.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The wire contract written for people ({@code docs/api.md}) and the one served to machines
 * ({@code static/openapi.yaml}) name the same operations, parameters and status codes. Each
 * is reduced to facts such as {@code "GET /items/store/{storeID} parameter limit in query"}
 * and {@code "GET /items/store/{storeID} status 504"}.
 */
class ApiDocumentTest {

    private static final Path DOCUMENT = Path.of("..", "docs", "api.md").toAbsolutePath().normalize();

    private static final Pattern OPERATION = Pattern.compile("^## (GET|POST|PUT|PATCH|DELETE) (/\\S*)\\s*$");
    private static final Pattern PARAMETER = Pattern.compile("^- `([^`]+)` \\((path|query|header)\\b");
    private static final Pattern STATUS = Pattern.compile("`(\\d{3})`");

    @Test
    void theDocumentNamesEverythingTheOpenApiFileServes() throws IOException {
        assertThat(documented()).as("in openapi.yaml, missing from docs/api.md").containsAll(served());
    }

    @Test
    void theOpenApiFileServesEverythingTheDocumentNames() throws IOException {
        assertThat(served()).as("in docs/api.md, missing from openapi.yaml").containsAll(documented());
    }

    @Test
    void bothDescribeTheFourOperations() throws IOException {
        Set<String> operations = Set.of("POST /purchase/{storeID}/customer/{custID}/date/{date}",
                "GET /items/store/{storeID}", "GET /items/top10/{itemID}", "GET /items/top5/{itemID}");
        assertThat(documented()).containsAll(operations);
        assertThat(served()).containsAll(operations);
    }

    /**
     * Facts from docs/api.md: an operation is a heading {@code ## METHOD /path}; under it, the
     * bullets after {@code Parameters:} start with {@code `name` (in)}, the bullets after
     * {@code Responses:} with one or more {@code `code`} before their first colon.
     */
    private static Set<String> documented() throws IOException {
        Set<String> facts = new TreeSet<>();
        String operation = null;
        String block = "";
        for (String line : Files.readAllLines(DOCUMENT)) {
            Matcher heading = OPERATION.matcher(line);
            if (heading.matches()) {
                operation = heading.group(1) + " " + heading.group(2);
                facts.add(operation);
                block = "";
            } else if (line.startsWith("## ")) {
                operation = null;
            } else if (operation != null && (line.equals("Parameters:") || line.equals("Responses:"))) {
                block = line;
            } else if (operation != null && !line.startsWith("- ") && !line.startsWith(" ") && !line.isBlank()) {
                block = "";
            } else if (operation != null && block.equals("Parameters:")) {
                Matcher parameter = PARAMETER.matcher(line);
                if (parameter.find()) {
                    facts.add(operation + " parameter " + parameter.group(1) + " in " + parameter.group(2));
                }
            } else if (operation != null && block.equals("Responses:") && line.startsWith("- ")) {
                int colon = line.indexOf(':');
                Matcher status = STATUS.matcher(colon < 0 ? line : line.substring(0, colon));
                while (status.find()) {
                    facts.add(operation + " status " + status.group(1));
                }
            }
        }
        return facts;
    }

    /** The same facts from the served OpenAPI file, its {@code $ref}s to components followed. */
    @SuppressWarnings("unchecked")
    private static Set<String> served() throws IOException {
        Map<String, Object> openApi;
        try (InputStream in = ApiDocumentTest.class.getResourceAsStream("/static/openapi.yaml")) {
            assertThat(in).as("static/openapi.yaml on the class path").isNotNull();
            openApi = new Yaml().load(in);
        }
        Map<String, Object> components = (Map<String, Object>) openApi.get("components");
        Set<String> facts = new TreeSet<>();
        Map<String, Object> paths = (Map<String, Object>) openApi.get("paths");
        paths.forEach((path, item) -> ((Map<String, Object>) item).forEach((method, body) -> {
            String operation = method.toUpperCase() + " " + path;
            facts.add(operation);
            Map<String, Object> spec = (Map<String, Object>) body;
            for (Object parameter : (List<Object>) spec.getOrDefault("parameters", List.of())) {
                Map<String, Object> resolved = resolve(components, (Map<String, Object>) parameter);
                facts.add(operation + " parameter " + resolved.get("name") + " in " + resolved.get("in"));
            }
            ((Map<Object, Object>) spec.get("responses")).keySet()
                    .forEach(code -> facts.add(operation + " status " + code));
        }));
        return facts;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> resolve(Map<String, Object> components, Map<String, Object> node) {
        Object ref = node.get("$ref");
        if (ref == null) {
            return node;
        }
        String[] parts = ref.toString().replaceFirst("^#/components/", "").split("/");
        return (Map<String, Object>) ((Map<String, Object>) components.get(parts[0])).get(parts[1]);
    }
}
