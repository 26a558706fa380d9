package com.supermarket.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A command's input: a file, or standard input when the file is "-". */
public final class Input {

    private Input() {
    }

    /** The whole text of {@code file}, or of standard input when it is "-" or null. */
    public static String read(Path file) {
        try {
            return file == null || file.toString().equals("-")
                    ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                    : Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + (file == null ? "standard input" : file), e);
        }
    }
}
