package com.supermarket.purchases.ingest;

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

    void failed(Object holder, Exception cause) {
        Failure now = new Failure(Instant.now(), cause.toString());
        failing.merge(holder, now, (before, latest) -> new Failure(before.since(), latest.reason()));
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
     * @param reason its last error
     */
    public record Failure(Instant since, String reason) {
    }
}
