package com.supermarket.api.purchase;

import com.supermarket.api.purchase.IdempotencyStore.Claim;
import com.supermarket.contract.Purchase;

/**
 * A purchase the API parsed and is about to publish, with the claim its {@code Idempotency-Key}
 * makes on the idempotency store. Immutable.
 *
 * @param purchase       what is published
 * @param idempotencyKey the key's claim, or null when the request came without a key
 */
record PurchaseRequest(Purchase purchase, Claim idempotencyKey) {

    static PurchaseRequest unkeyed(Purchase purchase) {
        return new PurchaseRequest(purchase, null);
    }
}
