package com.supermarket.purchases.ingest;

import java.time.Instant;

/**
 * Whether the last write to the purchase store failed, as seen by the consumers; feeds the
 * readiness probe. Thread-safe: a single volatile reference, last writer wins.
 */
public final class StorageState {

    private volatile Failure failure;

    void succeeded() {
        failure = null;
    }

    void failed(RuntimeException cause) {
        Failure current = failure;
        failure = new Failure(current == null ? Instant.now() : current.since(), cause.toString());
    }

    /** The ongoing failure, or null while writes succeed. */
    public Failure failure() {
        return failure;
    }

    /**
     * @param since  when writes started failing
     * @param reason the last error
     */
    public record Failure(Instant since, String reason) {
    }
}
