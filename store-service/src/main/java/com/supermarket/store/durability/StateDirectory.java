package com.supermarket.store.durability;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The files of the durable state and their names. Log segment {@code n} is
 * {@code log-<n>.wal}; snapshot {@code n} is {@code snapshot-<n>.snap} and holds the effect of
 * every record of the segments below {@code n}, so recovery loads it and replays segments
 * {@code n, n+1, ...}. A snapshot being written is {@code snapshot-<n>.snap.tmp} until it is
 * complete and fsynced; a leftover temp file is never read.
 *
 * <p>Stateless apart from the path; thread-safe.
 */
record StateDirectory(Path path) {

    private static final Pattern SEGMENT = Pattern.compile("log-(\\d{16})\\.wal");
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot-(\\d{16})\\.snap");

    Path segment(long number) {
        return path.resolve("log-%016d.wal".formatted(number));
    }

    Path snapshot(long number) {
        return path.resolve("snapshot-%016d.snap".formatted(number));
    }

    Path snapshotInProgress(long number) {
        return path.resolve("snapshot-%016d.snap.tmp".formatted(number));
    }

    /** The numbers of the log segments present, ascending. */
    List<Long> segments() throws IOException {
        return numbers(SEGMENT);
    }

    /** The numbers of the (complete) snapshots present, ascending. */
    List<Long> snapshots() throws IOException {
        return numbers(SNAPSHOT);
    }

    /** Creates the directory if needed and removes snapshots a crash left half written. */
    void prepare() throws IOException {
        Files.createDirectories(path);
        try (Stream<Path> files = Files.list(path)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".snap.tmp")).toList()) {
                Files.delete(file);
            }
        }
    }

    /** Makes creations, renames and deletions in the directory durable. */
    void sync() throws IOException {
        try (FileChannel directory = FileChannel.open(path, StandardOpenOption.READ)) {
            directory.force(true);
        }
    }

    private List<Long> numbers(Pattern pattern) throws IOException {
        List<Long> numbers = new ArrayList<>();
        try (Stream<Path> files = Files.list(path)) {
            files.forEach(file -> {
                Matcher matcher = pattern.matcher(file.getFileName().toString());
                if (matcher.matches()) {
                    numbers.add(Long.parseLong(matcher.group(1)));
                }
            });
        }
        numbers.sort(null);
        return numbers;
    }
}
