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
     * @throws RuntimeException if the batch could not be stored; {@link #faultOf} tells whose
     *                          fault that is
     */
    StoreResult storeAll(List<Purchase> purchases);

    /** The number of stored purchases (DynamoDB: a full scan; meant for operators and tests). */
    long count();

    /** The stored purchase with its items, if any. */
    Optional<Purchase> findById(UUID purchaseId);

    /** Checks that the backend answers; throws if it does not. */
    void ping();

    /**
     * Whose fault a failure of {@link #storeAll} is. Decides what happens to the batch: only a
     * purchase proven bad is ever parked (docs/architecture.md, "purchases-service: writes, and whose fault a failed write is").
     */
    Fault faultOf(RuntimeException failure);

    /** Whose fault a failed write is. */
    enum Fault {
        /**
         * The store refuses every write alike, whatever the purchases: unreachable, timing out,
         * throttling, read-only, full, the service's rights or credentials refused, the table
         * missing. The batch is held and retried; never a reason to park a purchase.
         */
        STORE,
        /** A data error of a row (a value out of range or too long, a constraint): the purchase written alone with it is bad. */
        DATA,
        /**
         * Neither is known. The purchases are written one by one; one that still fails is bad
         * only once the store has accepted another write begun after its previous failure.
         */
        UNKNOWN
    }

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
