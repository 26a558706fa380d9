package com.supermarket.deployment;

import static com.supermarket.deployment.DeploymentFiles.map;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The load-client commands the deployment files and their docs show use options the load client
 * has: its picocli {@code @Option} names are read from its source, so a renamed option fails here
 * rather than in an operator's first benchmark on EKS.
 */
class LoadClientCommandsTest {

    /** {@code ... load-client run ...}, {@code ... app.jar run ...}: to the end of the (continued) line. */
    private static final Pattern RUN_COMMAND =
            Pattern.compile("(?:load-client|\\.jar) run\\b((?:[^\\n\\\\]|\\\\\\n)*)");
    private static final Pattern LONG_OPTION = Pattern.compile("(?<![\\w-])(--[a-z][a-z0-9-]*)");
    private static final Pattern OPTION_NAMES = Pattern.compile("@Option\\(names\\s*=\\s*(\\{[^}]*}|\"[^\"]*\")");
    private static final Pattern QUOTED = Pattern.compile("\"(-[^\"]+)\"");

    @Test
    void composeRunsTheLoadClientWithOptionsItHas() {
        @SuppressWarnings("unchecked")
        List<Object> command = (List<Object>) map(map(DeploymentFiles.yaml("docker-compose.yml").get("services"))
                .get("load-client")).get("command");

        assertThat(command).first().isEqualTo("run");
        assertThat(command).filteredOn(a -> a.toString().startsWith("--")).isNotEmpty()
                .allSatisfy(option -> assertThat(runOptions()).as("load-client run option").contains(option.toString()));
    }

    @Test
    void theDocumentedLoadClientCommandsUseOptionsItHas() {
        for (String file : List.of("docker-compose.yml", "deploy/README.md", "helm/supermarket/templates/NOTES.txt")) {
            List<String> used = new ArrayList<>();
            Matcher command = RUN_COMMAND.matcher(DeploymentFiles.read(file));
            while (command.find()) {
                Matcher option = LONG_OPTION.matcher(command.group(1));
                while (option.find()) {
                    used.add(option.group(1));
                }
            }
            assertThat(used).as("load-client run options shown in " + file).isNotEmpty()
                    .allSatisfy(option -> assertThat(runOptions()).as(file).contains(option));
        }
    }

    /** The long options of {@code load-client run}, from RunCommand's {@code @Option} annotations. */
    static Set<String> runOptions() {
        Path source = findSource("RunCommand.java");
        Set<String> options = new TreeSet<>(Set.of("--help", "--version"));
        Matcher annotation = OPTION_NAMES.matcher(DeploymentFiles.read(source));
        while (annotation.find()) {
            Matcher name = QUOTED.matcher(annotation.group(1));
            while (name.find()) {
                options.add(name.group(1));
            }
        }
        assertThat(options).as("options read from " + source).contains("--base-url");
        return options;
    }

    private static Path findSource(String fileName) {
        Path sources = DeploymentFiles.resolve("load-client/src/main/java");
        try (Stream<Path> files = Files.walk(sources)) {
            return files.filter(f -> f.getFileName().toString().equals(fileName)).findFirst()
                    .orElseThrow(() -> new AssertionError("no " + fileName + " under " + sources));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
