package com.supermarket.store.counts;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Ingest rate and query latency of {@link StoreCounts} at the full 100,000 items x 1,024 stores,
 * pre-filled with one standard load-client run (1,024 stores x 9 hours x 300 purchases x 5
 * items = 13.8 million increments). Not a test: run it with the {@code jmh} profile (see the
 * module README).
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class StoreCountsBenchmark {

    static final int STORES = 1024;
    static final int ITEMS = 100_000;
    static final int ITEMS_PER_PURCHASE = 5;
    static final int PREFILL_PURCHASES = STORES * 9 * 300;
    private static final LocalDate DATE = LocalDate.of(2021, 1, 1);

    StoreCounts counts;

    @Setup(Level.Trial)
    public void fill() {
        counts = new StoreCounts(STORES, ITEMS, 1024);
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < PREFILL_PURCHASES; i++) {
            counts.apply(purchase(random.nextLong(), random.nextLong(), 1 + random.nextInt(STORES),
                    random.nextInt(ITEMS) + 1, random.nextInt(ITEMS) + 1, random.nextInt(ITEMS) + 1,
                    random.nextInt(ITEMS) + 1, random.nextInt(ITEMS) + 1));
        }
    }

    /** One purchase of five random items at a random store; the score is item increments/s. */
    @Benchmark
    @Threads(2)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(ITEMS_PER_PURCHASE)
    public StoreCounts.Outcome ingest() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return counts.apply(purchase(random.nextLong(), random.nextLong(), 1 + random.nextInt(STORES),
                random.nextInt(ITEMS) + 1, random.nextInt(ITEMS) + 1, random.nextInt(ITEMS) + 1,
                random.nextInt(ITEMS) + 1, random.nextInt(ITEMS) + 1));
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object topItemsAtStore() {
        return counts.topItemsAtStore(1 + ThreadLocalRandom.current().nextInt(STORES), 10);
    }

    /** A limit beyond the kept leading items: one scan of the store's row. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object topItemsAtStoreScan() {
        return counts.topItemsAtStore(1 + ThreadLocalRandom.current().nextInt(STORES), StoreCounts.LEADERS + 1);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object topStoresForItem() {
        return counts.topStoresForItem(1 + ThreadLocalRandom.current().nextInt(ITEMS), 5);
    }

    private static Purchase purchase(long msb, long lsb, int store, int a, int b, int c, int d, int e) {
        return new Purchase(new UUID(msb, lsb), store, store * 1000, DATE,
                List.of(new PurchaseItem(a, 1), new PurchaseItem(b, 1), new PurchaseItem(c, 1),
                        new PurchaseItem(d, 1), new PurchaseItem(e, 1)), Instant.EPOCH);
    }
}
