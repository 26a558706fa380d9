package com.supermarket.tools.logs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code log-summary}: the services' broker events, warnings and errors, grouped. Not thread-safe. */
@Command(name = "log-summary", mixinStandardHelpOptions = true,
        description = { "The services' broker events, warnings and errors, grouped.",
                "Reads the services' JSON log lines (files, or standard input) and prints their warnings, errors and",
                "connection factory lines grouped once ids, tags and shard numbers are masked: count, first-last time, line." })
public final class LogSummaryCommand implements Callable<Integer> {

    @Parameters(arity = "0..*", paramLabel = "FILE", description = "Log files (default: standard input).")
    private List<Path> files = List.of();

    @Override
    public Integer call() throws IOException {
        LogSummary summary = new LogSummary();
        if (files.isEmpty()) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            in.lines().forEach(summary::accept);
        }
        for (Path file : files) {
            try (var lines = Files.lines(file)) {
                lines.forEach(summary::accept);
            }
        }
        summary.lines().forEach(System.out::println);
        return 0;
    }
}
