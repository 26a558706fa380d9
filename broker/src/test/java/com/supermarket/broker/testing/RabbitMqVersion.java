package com.supermarket.broker.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * The RabbitMQ the project runs, read from the one place that names it: the chart's broker image
 * ({@code helm/supermarket/values.yaml}, {@code rabbitmq.cluster.image}, an official
 * {@code rabbitmq:<version>-management}), which production runs. The tests' default image is
 * this one; {@code scripts/lib/rabbitmq-version.sh} reads the same value for the scripts and
 * {@code scripts/images.sh} (whose stand-in is tagged {@code supermarket-local/rabbitmq:<version>}).
 * Stateless; thread-safe.
 */
public final class RabbitMqVersion {

    /** The chart's values, relative to the repository root. */
    public static final String VALUES_FILE = "helm/supermarket/values.yaml";

    private static final Pattern OFFICIAL = Pattern.compile("rabbitmq:(\\d+\\.\\d+\\.\\d+)-management");

    private RabbitMqVersion() {
    }

    /** The official image, e.g. {@code rabbitmq:4.3.6-management}. */
    public static String officialImage() {
        return read().group();
    }

    /** The version, e.g. {@code 4.3.6}. */
    public static String version() {
        return read().group(1);
    }

    @SuppressWarnings("unchecked")
    private static Matcher read() {
        Path values = Scripts.root().resolve(VALUES_FILE);
        Map<String, Object> root;
        try {
            root = new Yaml().load(Files.readString(values));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + values, e);
        }
        Object image = ((Map<String, Object>) ((Map<String, Object>) root.get("rabbitmq")).get("cluster")).get("image");
        Matcher official = OFFICIAL.matcher(String.valueOf(image));
        if (!official.matches()) {
            throw new IllegalStateException(values + ": rabbitmq.cluster.image is '" + image
                    + "', not an official rabbitmq:<major.minor.patch>-management image, from which the tests take their broker");
        }
        return official;
    }
}
