package com.supermarket.purchases.storage;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measures stored purchases per second through a writer (a {@link PurchaseRepository}'s
 * {@code storeAll}, or a baseline): {@code threads}
 * writers (like the consumer threads) each storing their share of the purchases in batches of
 * {@code batchSize} (1 = one transaction / one PutItem per purchase, the original design).
 * Purchases carry 5 items, the standard client's default. Results are appended to
 * {@code target/benchmark-results.txt}. Wall-clock figures on a shared machine: noisy.
 */
public final class WriteBenchmarkHarness {

    private static final Logger log = LoggerFactory.getLogger(WriteBenchmarkHarness.class);

    private WriteBenchmarkHarness() {
    }

    /** Runs one configuration and returns the purchases stored per second. */
    public static double run(String backend, Consumer<List<Purchase>> writer, int purchases, int threads, int batchSize)
            throws Exception {
        List<List<Purchase>> batches = new ArrayList<>();
        for (int i = 0; i < purchases; i += batchSize) {
            List<Purchase> batch = new ArrayList<>(batchSize);
            for (int j = i; j < Math.min(purchases, i + batchSize); j++) {
                batch.add(purchase());
            }
            batches.add(batch);
        }
        long start = System.nanoTime();
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    for (int b = first; b < batches.size(); b += threads) {
                        writer.accept(batches.get(b));
                    }
                }));
            }
            for (Future<?> future : done) {
                future.get();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        double rate = purchases / seconds;
        String line = String.format("%-22s threads=%d batch=%4d purchases=%6d seconds=%7.2f purchases/s=%9.0f",
                backend, threads, batchSize, purchases, seconds, rate);
        log.info(line);
        try {
            Files.writeString(Path.of("target", "benchmark-results.txt"), line + System.lineSeparator(),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            log.warn("could not record the result: {}", e.toString());
        }
        return rate;
    }

    private static Purchase purchase() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int store = random.nextInt(1, 257);
        List<PurchaseItem> items = new ArrayList<>(5);
        for (int i = 0; i < 5; i++) {
            items.add(new PurchaseItem(random.nextInt(1, 100_001), 1));
        }
        return new Purchase(UUID.randomUUID(), store, store * 1000 + random.nextInt(1000), LocalDate.of(2021, 1, 1),
                items, Instant.now());
    }

    /** An integer setting from a system property, e.g. {@code -Dbenchmark.purchases=20000}. */
    public static int setting(String name, int fallback) {
        return Integer.getInteger("benchmark." + name, fallback);
    }
}
