package com.supermarket.store.durability;

import com.supermarket.store.counts.StoreCounts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;

/**
 * Full snapshots of the counts. A snapshot is a sequence of {@link Frames}: a header
 * ({@code int magic, int version, int maxStores, int maxItemId, long firstSegment}), one frame
 * per store that has sold ({@code int storeId, long purchases, int items, int[items] counts, int ids,
 * ids x (long, long)} with the dedup window oldest first, then {@code long logged}: the bytes of
 * log segment {@code firstSegment} written when the row was copied, absent (0) in snapshots
 * written before it was added), and a trailer
 * ({@code int magic, int stores}) whose presence and count prove the file complete. It is
 * written to a temp file, fsynced, renamed into place and the directory fsynced, so a crash
 * leaves either the complete new snapshot or none.
 *
 * <p>Stateless; thread-safe. Loading must finish before anything else touches the counts.
 */
final class Snapshots {

    private static final int HEADER_MAGIC = 0x53544353; // "STCS"
    private static final int TRAILER_MAGIC = 0x454E4421; // "END!"
    private static final int VERSION = 1;

    private Snapshots() {
    }

    /** Writes snapshot {@code number} of counts that no log segment {@code number} was written for. */
    static long write(StateDirectory directory, long number, StoreCounts counts) throws IOException {
        return write(directory, number, counts, () -> 0);
    }

    /**
     * Writes snapshot {@code number} of {@code counts}: the state of each store as of the moment
     * its row is copied (under the store's lock), which includes at least every record appended
     * to the log before segment {@code number} was started. With each row it saves
     * {@code loggedInSegment} as read under that lock: every record of segment {@code number}
     * ending there or before was counted before the copy, so recovery skips that store's
     * purchases in them however many there are, where the dedup window alone would forget all
     * but the last {@code dedupWindowPerStore} (a burst while the snapshot is written).
     *
     * @param loggedInSegment the bytes appended to segment {@code number} so far
     * @return the snapshot's size in bytes
     */
    static long write(StateDirectory directory, long number, StoreCounts counts, LongSupplier loggedInSegment)
            throws IOException {
        Path temp = directory.snapshotInProgress(number);
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            write(out, number, counts, loggedInSegment);
            out.force(true);
        }
        Path target = directory.snapshot(number);
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        directory.sync();
        return Files.size(target);
    }

    /**
     * Streams a snapshot of {@code counts} numbered {@code number} to {@code out}, in the format
     * of the files (a live copy's counts for another copy's rebuild); see
     * {@link #write(StateDirectory, long, StoreCounts, LongSupplier)}.
     */
    static void write(WritableByteChannel out, long number, StoreCounts counts, LongSupplier loggedInSegment)
            throws IOException {
        Writer writer = new Writer(out, new Header(counts.maxStores(), counts.maxItemId(), number));
        // One buffer for every row: at 100,000 items a row is 400 KB, and allocating one per
        // store would make 400 MB of garbage per snapshot.
        ByteBuffer row = Frames.open(3 * Integer.BYTES + 2 * Long.BYTES + counts.maxItemId() * Integer.BYTES
                + counts.dedupWindowPerStore() * 2 * Long.BYTES);
        long[] logged = {0};
        IntConsumer whileLocked = storeId -> logged[0] = loggedInSegment.getAsLong();
        try {
            counts.snapshotTo(whileLocked, (storeId, itemCounts, purchases, recentIds) -> {
                row.clear().position(Integer.BYTES);
                row.putInt(storeId).putLong(purchases).putInt(itemCounts.length);
                row.asIntBuffer().put(itemCounts);
                row.position(row.position() + itemCounts.length * Integer.BYTES);
                row.putInt(recentIds.size());
                for (UUID id : recentIds) {
                    row.putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits());
                }
                row.putLong(logged[0]);
                try {
                    writer.frame(Frames.seal(row));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        writer.finish();
    }

    /**
     * What a snapshot's header says.
     *
     * @param maxStores the store ids it was written for, 1..maxStores
     * @param maxItemId the item ids it was written for, 1..maxItemId
     * @param number    its number: the log segment that follows it
     */
    record Header(int maxStores, int maxItemId, long number) {
    }

    /**
     * One store's row, as a snapshot holds it.
     *
     * @param storeId   the store
     * @param purchases the purchases it had counted
     * @param counts    quantity per item, index = item id - 1
     * @param recentIds its dedup window, oldest first
     * @param logged    the bytes of the snapshot's log segment whose records the row holds already
     */
    record Row(int storeId, long purchases, int[] counts, List<UUID> recentIds, long logged) {

        /** Reads the row from a row frame's payload, leaving {@code payload}'s position unchanged. */
        static Row read(ByteBuffer payload) {
            ByteBuffer row = payload.duplicate();
            int storeId = row.getInt();
            long purchases = row.getLong();
            int[] itemCounts = new int[row.getInt()];
            row.asIntBuffer().get(itemCounts);
            row.position(row.position() + itemCounts.length * Integer.BYTES);
            int ids = row.getInt();
            List<UUID> recent = new ArrayList<>(ids);
            for (int i = 0; i < ids; i++) {
                recent.add(new UUID(row.getLong(), row.getLong()));
            }
            // Absent in snapshots written before it was added.
            long logged = row.hasRemaining() ? row.getLong() : 0;
            return new Row(storeId, purchases, itemCounts, recent, logged);
        }
    }

    /** Receives each row of a snapshot being read. */
    @FunctionalInterface
    interface RowHandler {

        /**
         * @param storeId the row's store
         * @param payload the row frame's payload, positioned at its first byte ({@link Row#read}
         *                reads it, {@link Writer#copy} copies it); valid only during the call
         */
        void row(int storeId, ByteBuffer payload) throws IOException;
    }

    /**
     * Writes a snapshot frame by frame: the header at once, then each row, then the trailer with
     * the count of rows. Not thread-safe.
     */
    static final class Writer {

        private final WritableByteChannel out;
        private int stores;

        Writer(WritableByteChannel out, Header header) throws IOException {
            this.out = out;
            ByteBuffer frame = Frames.open(4 * Integer.BYTES + Long.BYTES);
            frame.putInt(HEADER_MAGIC).putInt(VERSION).putInt(header.maxStores()).putInt(header.maxItemId())
                    .putLong(header.number());
            write(out, Frames.seal(frame));
        }

        /** Writes a sealed row frame. */
        void frame(ByteBuffer row) throws IOException {
            write(out, row);
            stores++;
        }

        /** Writes a row read from another snapshot ({@link RowHandler}), unchanged. */
        void copy(ByteBuffer payload) throws IOException {
            ByteBuffer frame = Frames.open(payload.remaining());
            frame.put(payload.duplicate());
            frame(Frames.seal(frame));
        }

        /** The rows written so far. */
        int stores() {
            return stores;
        }

        /** Writes the trailer, which makes the snapshot complete. */
        void finish() throws IOException {
            ByteBuffer trailer = Frames.open(2 * Integer.BYTES);
            trailer.putInt(TRAILER_MAGIC).putInt(stores);
            write(out, Frames.seal(trailer));
        }
    }

    /**
     * Loads snapshot {@code number} into {@code counts} (which must be empty).
     *
     * @return per store id, the bytes of log segment {@code number} whose records the store's row
     *         holds already (0 for a store without a row)
     * @throws CorruptStateException if any frame fails its CRC, the trailer is missing or does
     *                               not match, or the snapshot does not fit the configured ranges
     */
    static long[] load(StateDirectory directory, long number, StoreCounts counts) throws IOException {
        long[] logged = new long[counts.maxStores() + 1];
        read(directory.snapshot(number), number, header -> header.maxStores() > counts.maxStores()
                || header.maxItemId() > counts.maxItemId()
                ? "it was written for " + header.maxStores() + " stores x " + header.maxItemId() + " items, more than the "
                  + counts.maxStores() + " x " + counts.maxItemId() + " configured (PLATFORM_MAX_STORES, "
                  + "PLATFORM_MAX_ITEM_ID); configure at least as many"
                : null, (storeId, payload) -> {
                    Row row = Row.read(payload);
                    counts.restoreStore(row.storeId(), row.counts(), row.purchases(), row.recentIds());
                    logged[row.storeId()] = row.logged();
                });
        return logged;
    }

    /**
     * Reads snapshot file {@code file}, which must be numbered {@code number}, checking every
     * frame, and hands each row to {@code rows} once the header passed {@code headerProblem}
     * (which says what is wrong with it, or null).
     *
     * @return its header
     * @throws CorruptStateException if any frame fails its CRC, the header is not a snapshot
     *                               {@code number}'s or has a problem, or the trailer is missing
     *                               or does not match
     */
    static Header read(Path file, long number, Function<Header, String> headerProblem, RowHandler rows)
            throws IOException {
        List<String> problems = new ArrayList<>(1);
        Header[] header = {null};
        int[] frames = {0};
        int[] trailerStores = {-1};
        int[] stores = {0};
        Frames.Scan scan = Frames.scan(file, (payload, start) -> {
            int frame = frames[0]++;
            if (trailerStores[0] >= 0) {
                problems.add("a frame after the trailer at byte " + start);
            } else if (frame == 0) {
                int magic = payload.getInt();
                int version = payload.getInt();
                header[0] = new Header(payload.getInt(), payload.getInt(), payload.getLong());
                if (magic != HEADER_MAGIC || version != VERSION || header[0].number() != number) {
                    problems.add("not a version " + VERSION + " snapshot " + number + " (magic " + Integer.toHexString(magic)
                            + ", version " + version + ", number " + header[0].number() + ")");
                } else {
                    String problem = headerProblem.apply(header[0]);
                    if (problem != null) {
                        problems.add(problem);
                    }
                }
            } else if (payload.remaining() == 2 * Integer.BYTES && payload.getInt(0) == TRAILER_MAGIC) {
                trailerStores[0] = payload.getInt(Integer.BYTES);
            } else if (problems.isEmpty()) {
                rows.row(payload.getInt(payload.position()), payload);
                stores[0]++;
            }
        });
        if (!scan.clean()) {
            problems.add(scan.problem());
        } else if (frames[0] == 0) {
            problems.add("it is empty");
        } else if (trailerStores[0] != stores[0] && problems.isEmpty()) {
            problems.add(trailerStores[0] < 0 ? "its trailer is missing (the file is incomplete)"
                    : "its trailer counts " + trailerStores[0] + " stores but it holds " + stores[0]);
        }
        if (!problems.isEmpty()) {
            throw new CorruptStateException(file, String.join("; ", problems), "");
        }
        return header[0];
    }

    private static void write(WritableByteChannel out, ByteBuffer frame) throws IOException {
        while (frame.hasRemaining()) {
            out.write(frame);
        }
    }
}
