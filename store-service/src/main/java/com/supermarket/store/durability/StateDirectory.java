package com.supermarket.store.durability;

import com.supermarket.contract.StorePartition;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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
 * complete and fsynced; a leftover temp file is never read. {@code partition} names the store
 * partition and copy whose counts the directory holds ({@link #claim}).
 *
 * <p>Stateless apart from the path; thread-safe.
 */
record StateDirectory(Path path) {

    private static final Pattern SEGMENT = Pattern.compile("log-(\\d{16})\\.wal");
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot-(\\d{16})\\.snap");
    private static final String PARTITION_MARK = "partition";

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

    /**
     * Whether the directory holds any counted state: a snapshot, or a log segment with a byte in
     * it. An empty directory, or one holding only empty segments (nothing was ever counted, or a
     * rebuild stopped before its snapshot was in place), holds none.
     */
    boolean hasState() throws IOException {
        if (!Files.isDirectory(path)) {
            return false;
        }
        if (!snapshots().isEmpty()) {
            return true;
        }
        for (long number : segments()) {
            if (Files.size(segment(number)) > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Makes sure the directory holds the counts of {@code copy} of {@code partition} and no other:
     * a new (or empty) directory is marked as theirs; one written before there were partitions is
     * copy 0 of partition 0 of 1's, one written before there were copies is copy 0's. A directory
     * of another partition, partition count or copy is refused: its log holds other stores, or
     * stores that now belong to another partition, or purchases another copy's queues delivered
     * (their acknowledgements are that copy's, not this one's).
     *
     * @throws IllegalStateException naming both
     */
    void claim(StorePartition partition, int copy) throws IOException {
        Files.createDirectories(path);
        Path mark = path.resolve(PARTITION_MARK);
        String wanted = mark(partition, copy);
        String found;
        if (Files.exists(mark)) {
            found = Files.readString(mark, StandardCharsets.US_ASCII).strip();
            if (!found.contains(", copy ")) {
                found += ", copy 0";
            }
        } else if (!segments().isEmpty() || !snapshots().isEmpty()) {
            found = "0 of 1, copy 0";
        } else {
            found = wanted;
        }
        if (!found.equals(wanted)) {
            throw new IllegalStateException("the state directory " + path + " holds the counts of store partition " + found
                    + ", not of this store partition " + wanted + " (STORE_PARTITION_INDEX, STORE_PARTITIONS, STORE_PARTITION_COPY): give "
                    + "each partition and copy its own state directory; a changed partition count moves stores between "
                    + "partitions, which needs new state directories (seeded by 'store-service repartition', "
                    + "docs/operations.md, \"Store partitions and copies\")");
        }
        if (!Files.exists(mark) || !Files.readString(mark, StandardCharsets.US_ASCII).strip().equals(wanted)) {
            writeMark(partition, copy);
        }
    }

    /**
     * Marks the directory as holding the counts of {@code copy} of {@code partition}, whatever it
     * held: for a directory written for them elsewhere ({@link Repartition}), marked last, so one
     * whose writing stopped short is not taken for theirs.
     */
    void writeMark(StorePartition partition, int copy) throws IOException {
        Path written = path.resolve(PARTITION_MARK + ".tmp");
        try (FileChannel file = FileChannel.open(written, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            file.write(ByteBuffer.wrap((mark(partition, copy) + "\n").getBytes(StandardCharsets.US_ASCII)));
            file.force(true);
        }
        Files.move(written, path.resolve(PARTITION_MARK), StandardCopyOption.ATOMIC_MOVE);
        sync();
    }

    /** How {@link #claim} names {@code copy} of {@code partition}: {@code "1 of 2, copy 0"}. */
    static String mark(StorePartition partition, int copy) {
        return partition.index() + " of " + partition.partitions() + ", copy " + copy;
    }

    /**
     * Puts the complete snapshot {@code temp} (written in this directory) in place as snapshot 0,
     * after an empty log segment 0 (recovery wants the log that follows a snapshot): the segment
     * made durable, then the snapshot fsynced, renamed into place, the directory fsynced. A crash
     * before the rename leaves no snapshot and an empty segment, which {@link #hasState()} reads as
     * no state.
     */
    void installFirstSnapshot(Path temp) throws IOException {
        try (FileChannel segment = FileChannel.open(segment(0), StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            segment.force(true);
        }
        sync();
        try (FileChannel snapshot = FileChannel.open(temp, StandardOpenOption.WRITE)) {
            snapshot.force(true);
        }
        Files.move(temp, snapshot(0), StandardCopyOption.ATOMIC_MOVE);
        sync();
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
