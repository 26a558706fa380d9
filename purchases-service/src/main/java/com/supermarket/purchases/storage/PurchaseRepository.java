package com.supermarket.purchases.storage;

import com.supermarket.contract.Purchase;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The system of record for purchases. One implementation per profile ({@code mysql},
 * {@code dynamodb}); nothing outside this package knows which one is active.
 *
 * <p>Implementations are thread-safe: every consumer thread writes through the same instance.
 */
public interface PurchaseRepository {

    /**
     * Stores a batch atomically where the backend allows it (MySQL: one transaction; DynamoDB:
     * each purchase is one item, so a retry after a partial failure rewrites the same items).
     * Idempotent on {@code purchaseId}: a purchase stored before is left as it is.
     *
     * @param purchases at least one purchase, with distinct ids
     * @return how many were new and how many were already stored
     * @throws RuntimeException if the batch could not be stored; {@link #isTransient} tells
     *                          whether retrying the same batch can succeed
     */
    StoreResult storeAll(List<Purchase> purchases);

    /** The number of stored purchases (DynamoDB: a full scan; meant for operators and tests). */
    long count();

    /** The stored purchase with its items, if any. */
    Optional<Purchase> findById(UUID purchaseId);

    /** Checks that the backend answers; throws if it does not. */
    void ping();

    /**
     * Whether a failure of {@link #storeAll} is about the backend's availability (connection
     * lost, timeout, throttling), so the same batch should be retried later, rather than about
     * the data (a constraint or validation error), which no retry can fix.
     */
    boolean isTransient(RuntimeException failure);

    /**
     * The outcome of {@link #storeAll}.
     *
     * @param stored     purchases written now
     * @param duplicates purchases that were already stored (redeliveries), left unchanged; the
     *                   DynamoDB backend cannot tell and reports 0
     */
    record StoreResult(int stored, int duplicates) {
    }
}
