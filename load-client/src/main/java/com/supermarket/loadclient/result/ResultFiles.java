package com.supermarket.loadclient.result;

import java.nio.file.Files;
import java.nio.file.Path;

import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads and writes {@link RunResult} JSON files. Thread-safe (the mapper is immutable).
 */
public final class ResultFiles {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(SerializationFeature.INDENT_OUTPUT)
            // Older or newer result files stay readable when fields are added: a number or flag
            // added later reads as 0 or false from a file written before it.
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .build();

    private ResultFiles() {
    }

    /** Writes {@code result} to {@code file}, creating parent folders. */
    public static void write(RunResult result, Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        MAPPER.writeValue(file.toFile(), result);
    }

    /** Reads one result file. */
    public static RunResult read(Path file) {
        return MAPPER.readValue(file.toFile(), RunResult.class);
    }
}
