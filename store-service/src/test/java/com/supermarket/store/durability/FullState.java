package com.supermarket.store.durability;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.store.counts.StoreCounts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Writes the worst state a restart can meet, for measuring recovery: a snapshot in which every
 * store has sold and has a full dedup window, followed by a log segment that has just reached
 * the snapshot threshold (the most a restart replays). For benchmarks only.
 */
public final class FullState {

    private FullState() {
    }

    /**
     * @param logBytes how much log to write after the snapshot (e.g. the 128 MiB of
     *                 {@code STORE_DURABILITY_SNAPSHOT_LOG_SIZE})
     * @return a one-line summary of what was written
     */
    public static String write(Path dir, int stores, int items, int window, long logBytes) throws IOException {
        StateDirectory state = new StateDirectory(dir);
        state.prepare();
        SplittableRandom random = new SplittableRandom(1);
        StoreCounts counts = new StoreCounts(stores, items, window);
        for (int store = 1; store <= stores; store++) {
            for (int i = 0; i < window; i++) {
                counts.apply(purchase(random, store, items));
            }
        }
        try (CountsLog log = new CountsLog(state, 0)) {
            // Segment 0 holds nothing the snapshot lacks; it is kept as the one before snapshot 1.
        }
        try (CountsLog log = new CountsLog(state, 1)) {
            long started = System.nanoTime();
            long bytes = Snapshots.write(state, 1, counts);
            long snapshotMillis = (System.nanoTime() - started) / 1_000_000;
            long written = 0;
            long purchases = 0;
            for (int records = 1; written < logBytes; records++) {
                List<Purchase> record = new ArrayList<>(25);
                for (int i = 0; i < 25; i++) {
                    record.add(purchase(random, 1 + random.nextInt(stores), items));
                }
                written = log.append(LogRecords.encode(record));
                purchases += record.size();
                if (records % 1000 == 0) {
                    log.flush();
                }
            }
            log.flush();
            return "snapshot " + (bytes >> 20) + " MiB (written in " + snapshotMillis + " ms) + log "
                    + (Files.size(state.segment(1)) >> 20) + " MiB of " + purchases + " purchases";
        }
    }

    private static Purchase purchase(SplittableRandom random, int store, int items) {
        List<PurchaseItem> lines = new ArrayList<>(5);
        for (int i = 0; i < 5; i++) {
            lines.add(new PurchaseItem(1 + random.nextInt(items), 1 + random.nextInt(3)));
        }
        return new Purchase(new UUID(random.nextLong(), random.nextLong()), store, 1, LocalDate.EPOCH, lines, Instant.EPOCH);
    }
}
