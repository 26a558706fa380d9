package com.supermarket.purchases.ingest;

import com.supermarket.contract.Purchase;
import com.supermarket.purchases.storage.PurchaseRepository;
import com.supermarket.purchases.storage.PurchaseRepository.StoreResult;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Writes a consumer's batch to the {@link PurchaseRepository} and does not give up while the
 * store is unavailable: it retries with exponential backoff and jitter, holding the batch (its
 * message stays unacknowledged in the broker), until the write succeeds or the service stops.
 * A batch that fails for a reason no retry can fix is split, so that only the offending
 * purchases are rejected.
 *
 * <p>A lifecycle bean stopped before the shard consumers (which stop at a lower phase), so a
 * consumer waiting for the store is released and requeues its message instead of holding up
 * the shutdown.
 *
 * <p>Thread-safe: called concurrently by every consumer thread; it keeps no per-batch state
 * beyond the {@link StorageState} entry of each failing batch.
 */
@Component
public class BatchWriter implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(BatchWriter.class);

    private final PurchaseRepository repository;
    private final StorageState state;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final CountDownLatch stopping = new CountDownLatch(1);
    private volatile boolean running;
    private final Counter stored;
    private final Counter duplicates;
    private final Counter failures;
    private final Counter rejected;
    private final DistributionSummary batchSizes;
    private final Timer writeLatency;

    BatchWriter(PurchaseRepository repository, StorageState state, IngestProperties properties, MeterRegistry registry) {
        this.repository = repository;
        this.state = state;
        this.initialBackoff = properties.retryInitialBackoff();
        this.maxBackoff = properties.retryMaxBackoff();
        this.stored = Counter.builder("purchases.stored").description("Purchases written to the store for the first time")
                .register(registry);
        this.duplicates = Counter.builder("purchases.duplicates")
                .description("Redelivered purchases found already stored and left unchanged").register(registry);
        this.failures = Counter.builder("purchases.write.failures")
                .description("Batch writes that failed and were retried").register(registry);
        this.rejected = Counter.builder("purchases.rejected")
                .description("Purchases the store refused for good (sent to the parking queue)").register(registry);
        this.batchSizes = DistributionSummary.builder("purchases.batch.size").description("Purchases per write")
                .baseUnit("purchases").publishPercentileHistogram().serviceLevelObjectives(1, 10, 25, 50, 100, 250, 500)
                .register(registry);
        this.writeLatency = Timer.builder("purchases.write").description("Time to store one batch (successful attempts)")
                .publishPercentileHistogram().register(registry);
    }

    /**
     * Stores {@code purchases}; returns once every one of them is stored or rejected for good.
     *
     * @return the ids of the purchases the store refused for good (to be dead-lettered)
     * @throws InterruptedException if the service stops while the store is unavailable; nothing
     *                              of the batch may be acknowledged then
     */
    public Set<UUID> write(List<Purchase> purchases) throws InterruptedException {
        Map<UUID, Purchase> distinct = new LinkedHashMap<>();
        purchases.forEach(purchase -> distinct.putIfAbsent(purchase.purchaseId(), purchase));
        // A purchase redelivered into the same batch is a duplicate too (and DynamoDB refuses a
        // batch that names one key twice).
        duplicates.increment(purchases.size() - distinct.size());
        batchSizes.record(purchases.size());
        List<Purchase> batch = List.copyOf(distinct.values());
        try {
            storeWithRetry(batch);
            return Set.of();
        } catch (PermanentFailure batchFailure) {
            log.warn("Batch of {} refused by the store ({}); storing its purchases one by one to isolate the cause",
                    batch.size(), batchFailure.getCause().toString());
        }
        Set<UUID> refused = new HashSet<>();
        for (Purchase purchase : batch) {
            try {
                storeWithRetry(List.of(purchase));
            } catch (PermanentFailure failure) {
                log.error("Purchase {} refused by the store for good, rejecting it to the parking queue",
                        purchase.purchaseId(), failure.getCause());
                rejected.increment();
                refused.add(purchase.purchaseId());
            }
        }
        return refused;
    }

    /**
     * Waits the backoff before attempt {@code attempt + 1} (doubling from the initial backoff up
     * to the maximum, with full jitter, so consumers that failed together do not all come back
     * at once).
     *
     * @return the milliseconds waited
     * @throws InterruptedException if the service stops meanwhile
     */
    long backoff(int attempt) throws InterruptedException {
        long ceiling = initialBackoff.toMillis() << Math.min(attempt - 1, 20);
        ceiling = Math.min(Math.max(ceiling, 1), maxBackoff.toMillis());
        long waitMillis = ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1);
        if (stopping.await(waitMillis, TimeUnit.MILLISECONDS)) {
            throw new InterruptedException("stopping while a batch waits");
        }
        return waitMillis;
    }

    private void storeWithRetry(List<Purchase> batch) throws InterruptedException, PermanentFailure {
        Object holder = new Object();
        try {
            for (int attempt = 1; ; attempt++) {
                long start = System.nanoTime();
                try {
                    StoreResult result = repository.storeAll(batch);
                    writeLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                    stored.increment(result.stored());
                    duplicates.increment(result.duplicates());
                    if (attempt > 1) {
                        log.info("Purchase store available again after {} attempt(s)", attempt);
                    }
                    return;
                } catch (RuntimeException e) {
                    if (!repository.isTransient(e)) {
                        throw new PermanentFailure(e);
                    }
                    failures.increment();
                    state.failed(holder, e);
                    if (attempt == 1 || Long.bitCount(attempt) == 1) {
                        log.warn("Purchase store unavailable (attempt {}), holding a batch of {} unacknowledged and retrying: {}",
                                attempt, batch.size(), e.toString());
                    }
                    backoff(attempt);
                }
            }
        } finally {
            state.settled(holder);
        }
    }

    @Override
    public void start() {
        running = true;
    }

    /** Makes every writer waiting for the store give up; called once, when the service stops. */
    @Override
    public void stop() {
        running = false;
        stopping.countDown();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    private static final class PermanentFailure extends Exception {
        PermanentFailure(RuntimeException cause) {
            super(cause);
        }
    }
}
