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
        ByteBuffer header = Frames.open(4 * Integer.BYTES + Long.BYTES);
        header.putInt(HEADER_MAGIC).putInt(VERSION).putInt(counts.maxStores()).putInt(counts.maxItemId())
                .putLong(number);
        write(out, Frames.seal(header));
        int[] stores = {0};
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
                    write(out, Frames.seal(row));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                stores[0]++;
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        ByteBuffer trailer = Frames.open(2 * Integer.BYTES);
        trailer.putInt(TRAILER_MAGIC).putInt(stores[0]);
        write(out, Frames.seal(trailer));
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
        Path file = directory.snapshot(number);
        long[] logged = new long[counts.maxStores() + 1];
        List<String> problems = new ArrayList<>(1);
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
                int maxStores = payload.getInt();
                int maxItemId = payload.getInt();
                long first = payload.getLong();
                if (magic != HEADER_MAGIC || version != VERSION || first != number) {
                    problems.add("not a version " + VERSION + " snapshot " + number + " (magic " + Integer.toHexString(magic)
                            + ", version " + version + ", number " + first + ")");
                } else if (maxStores > counts.maxStores() || maxItemId > counts.maxItemId()) {
                    problems.add("it was written for " + maxStores + " stores x " + maxItemId + " items, more than the "
                            + counts.maxStores() + " x " + counts.maxItemId() + " configured (PLATFORM_MAX_STORES, "
                            + "PLATFORM_MAX_ITEM_ID); configure at least as many");
                }
            } else if (payload.remaining() == 2 * Integer.BYTES && payload.getInt(0) == TRAILER_MAGIC) {
                trailerStores[0] = payload.getInt(Integer.BYTES);
            } else if (problems.isEmpty()) {
                restoreRow(payload, counts, logged);
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
        return logged;
    }

    private static void restoreRow(ByteBuffer payload, StoreCounts counts, long[] logged) {
        int storeId = payload.getInt();
        long purchases = payload.getLong();
        int[] itemCounts = new int[payload.getInt()];
        payload.asIntBuffer().get(itemCounts);
        payload.position(payload.position() + itemCounts.length * Integer.BYTES);
        int ids = payload.getInt();
        List<UUID> recent = new ArrayList<>(ids);
        for (int i = 0; i < ids; i++) {
            recent.add(new UUID(payload.getLong(), payload.getLong()));
        }
        counts.restoreStore(storeId, itemCounts, purchases, recent);
        logged[storeId] = payload.hasRemaining() ? payload.getLong() : 0;
    }

    private static void write(WritableByteChannel out, ByteBuffer frame) throws IOException {
        while (frame.hasRemaining()) {
            out.write(frame);
        }
    }
}
