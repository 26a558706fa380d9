package com.supermarket.api.purchase;

/** A purchase request the contract does not allow; answered {@code 400} and never published. */
final class InvalidPurchaseException extends RuntimeException {

    /** Low-cardinality reason, the {@code reason} tag of {@code api.purchases.rejected}. */
    enum Reason { STORE, CUSTOMER, DATE, BODY_SIZE, MALFORMED_JSON, ITEMS, ITEM_ID, QUANTITY, IDEMPOTENCY_KEY }

    private final Reason reason;

    InvalidPurchaseException(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    Reason reason() {
        return reason;
    }
}
