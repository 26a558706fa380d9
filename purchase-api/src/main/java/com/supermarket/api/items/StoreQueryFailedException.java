package com.supermarket.api.items;

/** A store query that got no usable answer; {@link #status()} is the HTTP status to answer. */
final class StoreQueryFailedException extends RuntimeException {

    private final int status;

    StoreQueryFailedException(int status, String message) {
        this(status, message, null);
    }

    StoreQueryFailedException(int status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    int status() {
        return status;
    }
}
