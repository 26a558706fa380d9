package com.supermarket.contract;

/**
 * A message body that is not a valid instance of the expected contract type. Consumers treat
 * it as poison: it is rejected to the dead-letter exchange, never requeued.
 */
public class MalformedMessageException extends RuntimeException {

    public MalformedMessageException(String message, Throwable cause) {
        super(message, cause);
    }
}
