package com.supermarket.deployment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * Every setting of the three services: each {@code ${VAR:default}} placeholder of their
 * {@code application*.yml} and of the shared defaults file, with the property it sets, its
 * default and a description (the service's configuration metadata, written by
 * {@code spring-boot-configuration-processor} from the properties records' Javadoc, else the YAML
 * comment above the key), plus the bound properties no placeholder names. The naming rule of the
 * environment variables and its exceptions are here too; docs/settings.md is {@link #markdown()}.
 * Stateless; thread-safe.
 */
final class SettingsCatalog {

    /** Each service's own prefix. */
    static final Map<String, String> PREFIXES = Map.of(
            "purchase-api", "api.", "store-service", "store.", "purchases-service", "purchases.");

    /** Conventional names kept although they do not follow the rule, by prefix or whole name. */
    static final List<String> EXCEPTION_PREFIXES = List.of("RABBITMQ_", "TRACING_", "MYSQL_");
    static final Set<String> EXCEPTION_NAMES = Set.of("LOG_FORMAT", "MANAGEMENT_PORT", "SPRING_PROFILES_ACTIVE",
            "AWS_REGION");
    /** Kept in the shared defaults file only: the broker and topology block every service reads. */
    static final List<String> SHARED_EXCEPTION_PREFIXES = List.of("BROKER_");
    static final Set<String> SHARED_EXCEPTION_NAMES = Set.of("STORE_PARTITIONS", "STORE_COPIES");

    static final String DOC = "docs/settings.md";
    static final String REGENERATE = "./mvnw -o -B -ntp -q -pl deployment -am test -Dtest=SettingsTest "
            + "-Dsurefire.failIfNoSpecifiedTests=false -Dsettings.regenerate=true";

    private static final Pattern KEY = Pattern.compile("^( *)([^\\s#:-][^:]*?):(?:\\s+(.*))?$");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*)(:?)");

    /** One setting: where it is read, its variable (null for a property without one), property, default, description. */
    record Setting(String file, String variable, String property, String defaultValue, String description) {
    }

    private SettingsCatalog() {
    }

    /** The environment variable the rule gives a property: upper case, '.' and '-' as '_'. */
    static String variableOf(String property) {
        return property.toUpperCase().replace('.', '_').replace('-', '_');
    }

    /** Whether {@code variable} may differ from the rule's name, in the shared file or in a service's own. */
    static boolean isException(String variable, boolean sharedFile) {
        if (EXCEPTION_NAMES.contains(variable) || EXCEPTION_PREFIXES.stream().anyMatch(variable::startsWith)) {
            return true;
        }
        return sharedFile && (SHARED_EXCEPTION_NAMES.contains(variable)
                || SHARED_EXCEPTION_PREFIXES.stream().anyMatch(variable::startsWith));
    }

    /** The placeholders of the shared defaults file. */
    static List<Setting> shared() {
        return placeholders(DeploymentFiles.resolve(ServiceSettings.SHARED_DEFAULTS), Map.of());
    }

    /**
     * The service's settings: the placeholders of its configuration files, then the properties of
     * its metadata that no placeholder names.
     */
    static List<Setting> service(String service) {
        Map<String, String> descriptions = metadata(service);
        List<Setting> settings = new ArrayList<>();
        for (Path file : ServiceSettings.configurationFiles(service)) {
            settings.addAll(placeholders(file, descriptions));
        }
        Set<String> named = new HashSet<>();
        settings.forEach(s -> named.add(s.property()));
        descriptions.forEach((property, description) -> {
            if (!named.contains(property)) {
                settings.add(new Setting("metadata", null, property, defaults(service).get(property), description));
            }
        });
        return settings;
    }

    /** docs/settings.md. */
    static String markdown() {
        StringBuilder out = new StringBuilder("""
                # Settings

                <!-- Generated from the services' configuration metadata and application*.yml; do not edit.
                     Regenerate: %s -->

                Every setting is an environment variable. A service's own setting is named after its
                property, upper-cased with `.` and `-` turned into `_`: `api.publish.confirm-timeout` is
                `API_PUBLISH_CONFIRM_TIMEOUT`, and so `api.*` (purchase-api), `store.*` (store-service),
                `purchases.*` (purchases-service), Spring Boot's `server.*` and `spring.*`, and the
                shared `platform.*`. The exceptions keep their conventional names: %s, %s, and in the
                shared broker block %s and %s. `deployment/SettingsTest` checks the rule.

                Set one in docker-compose.yml under the service's `environment:`, in the Helm chart
                under `<service>.env` (one service) or `platform.env` (all three). What a deployment
                must set: README.md, "Deploying".
                """.formatted(REGENERATE, codes(EXCEPTION_PREFIXES, "*"), codes(EXCEPTION_NAMES, ""),
                codes(SHARED_EXCEPTION_PREFIXES, "*"), codes(SHARED_EXCEPTION_NAMES, "")));
        Map<String, List<Setting>> services = new LinkedHashMap<>();
        for (String service : List.of("purchase-api", "store-service", "purchases-service")) {
            services.put(service, service(service));
        }
        List<Setting> common = new ArrayList<>(shared());
        for (Setting setting : services.get("purchase-api")) {
            if (setting.file().equals("application.yml") && services.values().stream().allMatch(list -> list.stream()
                    .anyMatch(other -> other.file().equals("application.yml") && same(other, setting)))) {
                common.add(setting);
            }
        }
        table(out, "Every service", "the broker module's platform-defaults.yml and what each application.yml repeats",
                common);
        services.forEach((service, settings) -> {
            Map<String, List<Setting>> byFile = new TreeMap<>();
            settings.stream().filter(s -> common.stream().noneMatch(c -> same(c, s)))
                    .forEach(s -> byFile.computeIfAbsent(s.file(), f -> new ArrayList<>()).add(s));
            byFile.forEach((file, rows) -> table(out, service, file.equals("metadata")
                    ? "bound properties without an environment variable of their own" : file, rows));
        });
        return out.toString();
    }

    private static boolean same(Setting a, Setting b) {
        return a.property().equals(b.property()) && Objects.equals(a.variable(), b.variable())
                && Objects.equals(a.defaultValue(), b.defaultValue());
    }

    private static void table(StringBuilder out, String title, String source, List<Setting> rows) {
        out.append("\n## ").append(title).append(" (").append(source).append(")\n\n")
                .append("| Variable | Property | Default | Description |\n|---|---|---|---|\n");
        for (Setting s : rows) {
            out.append("| ").append(s.variable() == null ? "" : "`" + s.variable() + "`")
                    .append(" | `").append(s.property()).append("` | ")
                    .append(s.defaultValue() == null ? "" : s.defaultValue().isEmpty() ? "(empty)" : "`" + s.defaultValue() + "`")
                    .append(" | ").append(s.description().replace("|", "\\|")).append(" |\n");
        }
    }

    private static String codes(Collection<String> names, String suffix) {
        return String.join(", ", names.stream().sorted().map(n -> "`" + n + suffix + "`").toList());
    }

    /** The placeholders of one YAML file, each with the property path of its key. */
    static List<Setting> placeholders(Path file, Map<String, String> descriptions) {
        List<Setting> settings = new ArrayList<>();
        List<String> path = new ArrayList<>();
        List<Integer> indents = new ArrayList<>();
        StringBuilder comment = new StringBuilder();
        for (String line : DeploymentFiles.read(file).split("\n")) {
            String trimmed = line.strip();
            if (trimmed.startsWith("#")) {
                comment.append(' ').append(trimmed.substring(1).strip());
                continue;
            }
            Matcher key = KEY.matcher(line);
            if (!key.matches()) {
                comment.setLength(0);
                continue;
            }
            int indent = key.group(1).length();
            while (!indents.isEmpty() && indents.getLast() >= indent) {
                indents.removeLast();
                path.removeLast();
            }
            indents.add(indent);
            path.add(key.group(2).strip());
            String value = key.group(3) == null ? "" : key.group(3);
            Matcher placeholder = PLACEHOLDER.matcher(value);
            if (placeholder.find()) {
                String property = String.join(".", path);
                String defaultValue = placeholder.group(2).isEmpty() ? null : until(value, placeholder.end());
                String description = descriptions.getOrDefault(property, comment.toString().strip());
                settings.add(new Setting(file.getFileName().toString(), placeholder.group(1), property, defaultValue,
                        description));
            }
            comment.setLength(0);
        }
        return settings;
    }

    /** The text from {@code start} to the brace closing the placeholder that contains it. */
    private static String until(String value, int start) {
        int depth = 1;
        for (int i = start; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return value.substring(start, i);
            }
        }
        throw new IllegalStateException("unclosed placeholder: " + value);
    }

    /** The service's bound properties and their descriptions, from the metadata its build writes. */
    static Map<String, String> metadata(String service) {
        Map<String, String> descriptions = new TreeMap<>();
        for (Map<String, Object> property : properties(service)) {
            descriptions.put((String) property.get("name"), text((String) property.getOrDefault("description", "")));
        }
        return descriptions;
    }

    private static Map<String, String> defaults(String service) {
        Map<String, String> defaults = new TreeMap<>();
        for (Map<String, Object> property : properties(service)) {
            Object value = property.get("defaultValue");
            defaults.put((String) property.get("name"), value == null ? null : value.toString());
        }
        return defaults;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> properties(String service) {
        Path file = DeploymentFiles.resolve(service).resolve("target/classes/META-INF/spring-configuration-metadata.json");
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException(file + " is missing: compile " + service
                    + " first (build the deployment module with -am, which builds the services before it)");
        }
        // JSON read as YAML, which has no "\/" escape: in JSON it is just "/".
        Map<String, Object> metadata = new Yaml().load(DeploymentFiles.read(file).replace("\\/", "/"));
        // An actuator endpoint of a service's own adds Spring Boot's access setting for it, which
        // is the framework's (docs: Actuator), not one of the service's.
        return ((List<Map<String, Object>>) metadata.get("properties")).stream()
                .filter(property -> !((String) property.get("name")).startsWith("management.endpoint."))
                .toList();
    }

    /** Javadoc as Markdown on one line. */
    private static String text(String javadoc) {
        return javadoc.replaceAll("\\{@(?:code|literal) ([^}]*(?:\\{[^}]*}[^}]*)*)}", "`$1`")
                .replaceAll("\\{@(?:link|linkplain|value) ([^}]*)}", "$1")
                .replaceAll("</?p>", " ").replaceAll("\\s+", " ").strip();
    }
}
