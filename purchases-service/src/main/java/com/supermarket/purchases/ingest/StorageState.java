package com.supermarket.purchases.ingest;

import com.supermarket.purchases.storage.PurchaseRepository.Fault;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which deliveries are being held because their write fails, as seen by the consumers; feeds
 * the readiness probe. Each holder (a batch being retried, a message failing unexpectedly) has
 * its own entry, so one consumer's success never clears another consumer's failure: the state
 * reads healthy only once every failing holder has succeeded or given up.
 *
 * <p>Thread-safe: a concurrent map; {@link #failure()} is a weakly consistent snapshot.
 */
public final class StorageState {

    private final Map<Object, Failure> failing = new ConcurrentHashMap<>();

    void failed(Object holder, Fault fault, Throwable cause) {
        Failure now = new Failure(Instant.now(), fault, cause.toString());
        failing.merge(holder, now, (before, latest) -> new Failure(before.since(), latest.fault(), latest.reason()));
    }

    void settled(Object holder) {
        failing.remove(holder);
    }

    /** The longest-running failure among the holders, or null while nothing is held. */
    public Failure failure() {
        return failing.values().stream().min(Comparator.comparing(Failure::since)).orElse(null);
    }

    /**
     * @param since  when this holder's writes started failing
     * @param fault  whose fault its last error is ({@link Fault#STORE}: the store refuses
     *               every write; {@link Fault#UNKNOWN}: its purchases fail alone while the store
     *               has accepted no other write since, so none is proven bad)
     * @param reason its last error (the most specific cause: the database's own message)
     */
    public record Failure(Instant since, Fault fault, String reason) {
    }
}
