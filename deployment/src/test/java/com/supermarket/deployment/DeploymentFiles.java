package com.supermarket.deployment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * Where the deployment files are: the repository root, given by the build (system property
 * {@code deployment.root}) or, when a test runs from an IDE, found by walking up to the root pom.
 * Stateless; thread-safe.
 */
final class DeploymentFiles {

    private DeploymentFiles() {
    }

    /** The repository root. */
    static Path root() {
        String configured = System.getProperty("deployment.root");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured).toAbsolutePath().normalize();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("helm")) && Files.isRegularFile(dir.resolve("docker-compose.yml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("cannot find the repository root; set -Ddeployment.root");
    }

    static Path resolve(String relative) {
        return root().resolve(relative);
    }

    static String read(String relative) {
        return read(resolve(relative));
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A YAML file as nested maps and lists (merge keys resolved). */
    static Map<String, Object> yaml(String relative) {
        return new Yaml().load(read(relative));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }
}
