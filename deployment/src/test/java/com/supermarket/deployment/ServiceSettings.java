package com.supermarket.deployment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a service actually reads from its environment, taken from its own
 * {@code src/main/resources/application*.yml} and the defaults every service shares (the broker
 * module's {@code platform-defaults.yml}): every {@code ${VAR}} / {@code ${VAR:default}}
 * placeholder, and the Spring profiles it ships ({@code application-<profile>.yml}). The
 * deployment files are checked against these, so a setting renamed in a service breaks the build
 * here instead of being silently ignored in production. Stateless; thread-safe.
 */
final class ServiceSettings {

    /** The three services (module directory names). */
    static final Set<String> SERVICES = Set.of("purchase-api", "store-service", "purchases-service");

    /**
     * Read by the JVM or by Spring Boot itself rather than through a placeholder, so any service
     * may be given them.
     */
    static final Set<String> PLATFORM_VARIABLES = Set.of("JAVA_TOOL_OPTIONS", "SPRING_PROFILES_ACTIVE");

    /** The defaults file every service loads (the broker module's PlatformDefaults). */
    static final String SHARED_DEFAULTS = "broker/src/main/resources/com/supermarket/broker/platform-defaults.yml";

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*)[:}]");
    private static final Pattern PROFILE_FILE = Pattern.compile("application-([A-Za-z0-9_-]+)\\.ya?ml");

    private ServiceSettings() {
    }

    /** Every environment variable the service's configuration files read. */
    static Set<String> variables(String service) {
        Set<String> names = new TreeSet<>();
        Set<Path> files = new TreeSet<>(configurationFiles(service));
        files.add(DeploymentFiles.resolve(SHARED_DEFAULTS));
        for (Path file : files) {
            Matcher matcher = PLACEHOLDER.matcher(DeploymentFiles.read(file));
            while (matcher.find()) {
                names.add(matcher.group(1));
            }
        }
        if (names.isEmpty()) {
            throw new IllegalStateException("no ${VAR} placeholders found for " + service);
        }
        return names;
    }

    /** The variables a deployment may set for the service: its own plus the JVM/Spring ones. */
    static Set<String> accepted(String service) {
        Set<String> names = new TreeSet<>(variables(service));
        names.addAll(PLATFORM_VARIABLES);
        return names;
    }

    /** The variables at least one service reads: what a settings block shared by all may hold. */
    static Set<String> acceptedByAny() {
        Set<String> names = new TreeSet<>(PLATFORM_VARIABLES);
        SERVICES.forEach(service -> names.addAll(variables(service)));
        return names;
    }

    /** The profiles the service ships a configuration file for. */
    static Set<String> profiles(String service) {
        Set<String> profiles = new TreeSet<>();
        for (Path file : configurationFiles(service)) {
            Matcher matcher = PROFILE_FILE.matcher(file.getFileName().toString());
            if (matcher.matches()) {
                profiles.add(matcher.group(1));
            }
        }
        return profiles;
    }

    /** The service's application.yml and profile files. */
    static Set<Path> configurationFiles(String service) {
        Path resources = DeploymentFiles.resolve(service).resolve("src/main/resources");
        try (Stream<Path> files = Files.list(resources)) {
            Set<Path> found = new TreeSet<>(files
                    .filter(f -> f.getFileName().toString().matches("application(-[A-Za-z0-9_-]+)?\\.ya?ml"))
                    .toList());
            if (found.isEmpty()) {
                throw new IllegalStateException("no application*.yml in " + resources);
            }
            return found;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + resources, e);
        }
    }
}
