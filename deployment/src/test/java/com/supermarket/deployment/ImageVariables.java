package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The third-party images, named through variables ({@code ${RABBITMQ_IMAGE:-rabbitmq:4.3.6-management}}
 * in docker-compose.yml, {@code ARG JAVA_RUNTIME_IMAGE=...} in the Dockerfiles) whose defaults are
 * the official images and which {@code scripts/images.sh --print} points at local stand-ins.
 * Stateless; thread-safe.
 */
final class ImageVariables {

    /** {@code ${NAME:-default}}, the whole value. */
    private static final Pattern WITH_DEFAULT = Pattern.compile("\\$\\{(\\w+):-([^}]+)}");
    /** A line {@code NAME=supermarket-local/...} of the variables images.sh prints. */
    private static final Pattern PRINTED = Pattern.compile("(?m)^(\\w+_IMAGE)=\\$PREFIX/");

    private ImageVariables() {
    }

    /** The variables {@code scripts/images.sh --print} sets, read from the script. */
    static Set<String> printedByImagesScript() {
        Set<String> names = new LinkedHashSet<>();
        Matcher line = PRINTED.matcher(DeploymentFiles.read("scripts/images.sh"));
        while (line.find()) {
            names.add(line.group(1));
        }
        assertThat(names).as("variables printed by scripts/images.sh").isNotEmpty();
        return names;
    }

    /**
     * The default of a {@code ${NAME:-default}} image reference, after checking that images.sh
     * sets NAME and that the default is an official image (Docker Hub, not a local stand-in)
     * pinned to a version.
     */
    static String officialDefault(String reference) {
        Matcher variable = WITH_DEFAULT.matcher(reference);
        assertThat(variable.matches()).as("%s is ${NAME:-official image}", reference).isTrue();
        assertThat(printedByImagesScript()).as("%s: a variable scripts/images.sh sets", reference)
                .contains(variable.group(1));
        return assertOfficialAndPinned(variable.group(2));
    }

    /** Checks an image is an official one pinned to a version; returns it. */
    static String assertOfficialAndPinned(String image) {
        HelmChartTest.assertPinned(image);
        String repository = image.substring(0, image.lastIndexOf(':'));
        assertThat(repository).as("%s: from Docker Hub, not a local stand-in or another registry", image)
                .doesNotStartWith("supermarket").matches("[a-z0-9-]+(/[a-z0-9-]+)?");
        return image;
    }
}
