package com.supermarket.api.purchase;

/**
 * The {@code Idempotency-Key} of a purchase was already used with a different purchase (store,
 * customer, date or items): answered {@code 422}, nothing published. The first purchase stays as
 * it was everywhere. Carries no stack trace: it is an answer, not a fault.
 */
final class IdempotencyConflictException extends RuntimeException {

    IdempotencyConflictException(String message) {
        super(message, null, false, false);
    }
}
