package com.supermarket.api.purchase;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Binds each {@code Idempotency-Key} (through the id that (store, key) gives) to the
 * fingerprint of the first purchase sent with it, in state every purchase-api replica shares, so
 * that a reused key is told apart: the same purchase again (a retry, published as before) or a
 * different one (refused). Implementations say their thread-safety.
 */
interface IdempotencyStore extends AutoCloseable {

    /** What a claim found. */
    enum Outcome {
        /** The key was free and is now bound to this fingerprint. */
        FIRST,
        /** The key was bound to this same fingerprint: a retry, of a purchase not known to be published. */
        SAME,
        /** The key was bound to this same fingerprint and its publish was {@link #confirmed}: a retry to answer at once. */
        CONFIRMED,
        /** The key was bound to another fingerprint: a different purchase under a reused key. */
        CONFLICT
    }

    /**
     * One keyed purchase: its key's id (derived from store and key, {@link PurchaseRequestParser#keyId})
     * and its {@link PurchaseFingerprint}.
     */
    record Claim(UUID key, String fingerprint) {
    }

    /** No store configured: nothing is checked, no claim is ever made. */
    IdempotencyStore OFF = new IdempotencyStore() {
        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public Duration maxWait() {
            return Duration.ZERO;
        }

        @Override
        public CompletableFuture<List<Outcome>> claim(List<Claim> claims) {
            throw new IllegalStateException("no idempotency store is configured");
        }

        @Override
        public void confirmed(List<Claim> claims) {
            throw new IllegalStateException("no idempotency store is configured");
        }

        @Override
        public void close() {
        }
    };

    /** False when no store is configured: keyed purchases are then published unchecked. */
    boolean enabled();

    /** The longest a {@link #claim} takes to answer or fail. */
    Duration maxWait();

    /**
     * Claims every key of {@code claims} for its fingerprint, atomically per key, in one round
     * trip, and answers what each found, in the order of {@code claims}, without waiting for the
     * answer. Two claims of one key in one call are taken in order (the second finds the first's
     * fingerprint). The future fails with an {@link IdempotencyStoreUnavailableException} when the
     * store did not answer within {@link #maxWait()}; some of the keys may have been bound then.
     */
    CompletableFuture<List<Outcome>> claim(List<Claim> claims);

    /**
     * Records, as far as the store is reachable and without waiting, that the purchases of these
     * claims were published and confirmed, so that a later claim of the same key and fingerprint
     * finds {@link Outcome#CONFIRMED}: the publisher then answers the retry without publishing it
     * again, however many purchases the consumers have seen since (their dedup windows are
     * finite). Losing a record costs only that: such a retry is published again.
     */
    void confirmed(List<Claim> claims);

    @Override
    void close();

    /** The store could not be reached or did not answer in time. */
    final class IdempotencyStoreUnavailableException extends RuntimeException {

        IdempotencyStoreUnavailableException(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }
}
