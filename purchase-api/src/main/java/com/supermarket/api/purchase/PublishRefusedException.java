package com.supermarket.api.purchase;

/**
 * The broker did not durably accept a purchase: answered {@code 503} with {@code Retry-After};
 * the client may retry. Thrown only when no confirm was seen, so there is never a false 201.
 * One instance answers every purchase of a refused batch, so it carries no stack trace.
 */
final class PublishRefusedException extends RuntimeException {

    /** Low-cardinality reason, the {@code reason} tag of {@code api.purchases.refused}. */
    enum Reason {
        BLOCKED, UNREACHABLE, CHANNELS_EXHAUSTED, OVERLOADED, CONFIRM_TIMEOUT, NACK, UNROUTABLE, INTERRUPTED,
        /** A keyed purchase whose key could not be checked: the idempotency store did not answer. */
        IDEMPOTENCY_UNAVAILABLE
    }

    private final Reason reason;

    PublishRefusedException(Reason reason, String message, Throwable cause) {
        super(message, cause, false, false);
        this.reason = reason;
    }

    Reason reason() {
        return reason;
    }
}
