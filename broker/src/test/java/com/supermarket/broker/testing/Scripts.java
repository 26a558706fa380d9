package com.supermarket.broker.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the repository's scripts and the broker's tools for the fixtures that start broker nodes. */
final class Scripts {

    private Scripts() {
    }

    /** {@code scripts/NAME} in the repository the test runs in (a module's parent). */
    static Path find(String name) {
        Path script = root().resolve("scripts").resolve(name);
        if (!Files.isExecutable(script)) {
            throw new IllegalStateException(script + " is not an executable script");
        }
        return script;
    }

    /** The root of the repository the test runs in: the nearest directory above with {@code scripts/} and {@code helm/}. */
    static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("scripts")) && Files.isDirectory(dir.resolve("helm"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root (scripts/ and helm/) above " + Path.of("").toAbsolutePath());
    }

    /**
     * Runs {@code command} and returns its output; fails with the output, and {@code needs} (what
     * the command requires), if it exits non-zero or outlasts {@code timeout}.
     */
    static String run(List<String> command, Duration timeout, String needs) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (needs " + needs + "):\n" + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command.get(0) + " (needs " + needs + ")", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command.get(0), e);
        }
    }
}
