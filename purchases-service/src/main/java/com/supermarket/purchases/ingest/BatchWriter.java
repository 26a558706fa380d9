package com.supermarket.purchases.ingest;

import com.supermarket.contract.Purchase;
import com.supermarket.purchases.storage.PurchaseRepository;
import com.supermarket.purchases.storage.PurchaseRepository.Fault;
import com.supermarket.purchases.storage.PurchaseRepository.StoreResult;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.stereotype.Component;

/**
 * Writes a batch (the purchases of a group of messages) to the {@link PurchaseRepository} and
 * rejects a purchase only when it is proven bad (docs/architecture.md, "purchases-service:
 * writes, and whose fault a failed write is"):
 * <ul>
 * <li>a failure that is the store's ({@link Fault#STORE}: unavailable, read-only, full, access
 * refused) holds the whole batch (its messages stay unacknowledged in the broker) and retries it
 * with exponential backoff and jitter until the write succeeds or the service stops;
 * <li>any other failure writes the batch's purchases one by one; one that fails alone is
 * rejected if its error is a data error ({@link Fault#DATA}), or if the store accepted another
 * write begun after this purchase's previous failure ({@link Fault#UNKNOWN}: the store took
 * writes, this purchase it did not). Purchases not proven bad are held and retried like a batch
 * the store refuses.
 * </ul>
 *
 * <p>While a batch is held, the purchases of messages that arrived meanwhile join it before each
 * retry: their writes are the other writes that prove a purchase failing alone bad, and the store
 * takes them in the same write once it is back.
 *
 * <p>Stopped by the {@link GroupWriter} when the service stops, before the shard consumers: a
 * write waiting for the store is released and its messages requeued instead of holding up the
 * shutdown.
 *
 * <p>Thread-safe: the {@link GroupWriter}'s one thread calls it, but nothing relies on that; it
 * keeps no per-batch state beyond the {@link StorageState} entry of each failing batch. The
 * attempt clock and the latest accepted write are atomics, so a stored write of any caller can
 * prove another caller's failing purchase bad.
 */
@Component
public class BatchWriter {

    private static final Logger log = LoggerFactory.getLogger(BatchWriter.class);
    /** A clock reading later than any: no failure yet, so nothing has happened since. */
    private static final long NEVER = Long.MAX_VALUE;

    private final PurchaseRepository repository;
    private final StorageState state;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final CountDownLatch stopping = new CountDownLatch(1);
    private final Counter stored;
    private final Counter duplicates;
    private final Map<Fault, Counter> failures = new EnumMap<>(Fault.class);
    /** Numbers the starts and failures of every write attempt of every consumer, in order. */
    private final AtomicLong clock = new AtomicLong();
    /** The {@link #clock} at the start of the latest-begun write the store accepted (0: none yet). */
    private final AtomicLong acceptedWriteBegunAt = new AtomicLong();
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
        for (Fault fault : Fault.values()) {
            failures.put(fault, Counter.builder("purchases.write.failures")
                    .tag("fault", fault.name().toLowerCase(Locale.ROOT))
                    .description("Write attempts that failed, by whose fault: store (the batch held and retried), "
                            + "data or unknown (its purchases written alone to find the bad ones)")
                    .register(registry));
        }
        this.rejected = Counter.builder("purchases.rejected")
                .description("Purchases proven bad: a data error, or failing alone while the store accepts other writes (parked)")
                .register(registry);
        this.batchSizes = DistributionSummary.builder("purchases.batch.size").description("Purchases per write")
                .baseUnit("purchases").publishPercentileHistogram().serviceLevelObjectives(1, 10, 25, 50, 100, 250, 500)
                .register(registry);
        this.writeLatency = Timer.builder("purchases.write").description("Time to store one batch (successful attempts)")
                .publishPercentileHistogram().register(registry);
    }

    /**
     * Stores {@code purchases}; returns once every one of them, and every one that joined, is
     * stored or proven bad.
     *
     * @param joining asked after each backoff of a held batch: the purchases that arrived
     *                meanwhile, to be written with it (those of messages held with it)
     * @return the ids of the purchases proven bad (to be parked)
     * @throws InterruptedException if the service stops while a batch is held; nothing of the
     *                              batch may be acknowledged then
     */
    public Set<UUID> write(List<Purchase> purchases, Supplier<List<Purchase>> joining) throws InterruptedException {
        Map<UUID, Purchase> distinct = new LinkedHashMap<>();
        batchSizes.record(purchases.size());
        List<Purchase> pending = join(List.of(), purchases, distinct);
        Set<UUID> refused = new HashSet<>();
        Object holder = new Object();
        long previousFailure = NEVER;
        int held = 0;
        try {
            while (true) {
                Attempt whole = store(pending);
                if (whole.stored()) {
                    if (held > 0) {
                        log.info("Purchase store accepts the held batch again after {} retries", held);
                    }
                    return refused;
                }
                Attempt latest = whole;
                if (whole.fault() != Fault.STORE) {
                    // Each purchase alone; one that fails is bad if proven so since its previous failure.
                    long since = pending.size() == 1 ? previousFailure : whole.failedAt();
                    if (pending.size() > 1 && (held == 0 || Long.bitCount(held) == 1)) {
                        log.warn("A batch of {} failed ({} fault), writing its purchases one by one to find any bad one: {}",
                                pending.size(), whole.fault(),
                                NestedExceptionUtils.getMostSpecificCause(whole.failure()).toString());
                    }
                    List<Purchase> unresolved = new ArrayList<>();
                    for (Purchase purchase : pending) {
                        Attempt alone = pending.size() == 1 || latest.fault() == Fault.STORE ? latest : store(List.of(purchase));
                        if (alone.stored()) {
                            continue;
                        }
                        latest = alone;
                        if (provenBad(alone, since)) {
                            log.error("Purchase {} refused by the store ({} fault), rejecting it to the parking queue",
                                    purchase.purchaseId(), alone.fault(), alone.failure());
                            rejected.increment();
                            refused.add(purchase.purchaseId());
                        } else {
                            unresolved.add(purchase);
                        }
                    }
                    boolean progress = unresolved.size() < pending.size();
                    pending = unresolved;
                    if (pending.isEmpty()) {
                        return refused;
                    }
                    if (progress) {
                        previousFailure = latest.failedAt();
                        continue; // the store took or refused some: try the rest at once
                    }
                }
                previousFailure = latest.failedAt();
                held++;
                Throwable cause = NestedExceptionUtils.getMostSpecificCause(latest.failure());
                state.failed(holder, latest.fault(), cause);
                if (held == 1 || Long.bitCount(held) == 1) {
                    log.warn("Purchase store refuses a batch of {} ({} fault, attempt {}), holding it unacknowledged and retrying: {}",
                            pending.size(), latest.fault(), held, cause.toString());
                }
                backoff(held);
                pending = join(pending, joining.get(), distinct);
            }
        } finally {
            state.settled(holder);
        }
    }

    /**
     * {@code pending} and those of {@code arrived} not seen before in this write ({@code seen}),
     * in order. A purchase redelivered into the same write is a duplicate too (and DynamoDB
     * refuses a batch that names one key twice).
     */
    private List<Purchase> join(List<Purchase> pending, List<Purchase> arrived, Map<UUID, Purchase> seen) {
        if (arrived.isEmpty()) {
            return pending;
        }
        List<Purchase> joined = new ArrayList<>(pending);
        for (Purchase purchase : arrived) {
            if (seen.putIfAbsent(purchase.purchaseId(), purchase) == null) {
                joined.add(purchase);
            } else {
                duplicates.increment();
            }
        }
        return List.copyOf(joined);
    }

    /**
     * Whether a purchase that failed {@code alone} is bad: a data error, or an unknown error
     * although the store accepted a write begun after the purchase's previous failure
     * ({@code since}, a {@link #clock} reading).
     */
    private boolean provenBad(Attempt alone, long since) {
        return alone.fault() == Fault.DATA || alone.fault() == Fault.UNKNOWN && acceptedWriteBegunAt.get() > since;
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

    private Attempt store(List<Purchase> batch) {
        long begunAt = clock.incrementAndGet();
        long start = System.nanoTime();
        try {
            StoreResult result = repository.storeAll(batch);
            writeLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            acceptedWriteBegunAt.accumulateAndGet(begunAt, Math::max);
            stored.increment(result.stored());
            duplicates.increment(result.duplicates());
            return Attempt.STORED;
        } catch (RuntimeException e) {
            Fault fault = repository.faultOf(e);
            failures.get(fault).increment();
            return new Attempt(e, fault, clock.incrementAndGet());
        }
    }

    /** Makes a write waiting for the store, and every backoff, give up; for good: the service stops. */
    void stop() {
        stopping.countDown();
    }

    /**
     * One write attempt: stored, or failed with {@code failure}, whose {@code fault} it is, at
     * {@code failedAt} (a {@link #clock} reading).
     */
    private record Attempt(RuntimeException failure, Fault fault, long failedAt) {
        static final Attempt STORED = new Attempt(null, null, NEVER);

        boolean stored() {
            return failure == null;
        }
    }
}
