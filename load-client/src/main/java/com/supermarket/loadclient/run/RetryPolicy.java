package com.supermarket.loadclient.run;

import java.net.ConnectException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.SplittableRandom;

/**
 * When and how long a till waits before sending a failed request again: exponential backoff
 * (base, doubling, capped) with "equal jitter" (half the step fixed, half random, so stores that
 * failed together do not come back together, yet each waits at least half the step), and never
 * sooner than the server's {@code Retry-After}.
 * <p>
 * Retried: 429, 5xx except 501/505, timeouts, connection errors and connections closed before the
 * answer; not retried: other 4xx (the request itself is wrong and would fail again). Immutable;
 * the random generator is passed in by its (single) owner.
 *
 * @param retries   extra attempts after the first (0 = never retry)
 * @param baseDelay first backoff step
 * @param maxDelay  cap of a backoff step (an honoured {@code Retry-After} may be longer, up to
 *                  {@link #MAX_RETRY_AFTER})
 */
record RetryPolicy(int retries, Duration baseDelay, Duration maxDelay) {

    /** Retry-After is honoured up to this, so a run stays bounded whatever the server says. */
    static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(60);

    static RetryPolicy standard(int retries) {
        return new RetryPolicy(retries, Duration.ofMillis(100), Duration.ofSeconds(10));
    }

    static boolean retryableStatus(int status) {
        return status == 429 || (status >= 500 && status != 501 && status != 505);
    }

    /** A connection that could not be opened means no server is there (yet). */
    static boolean isConnectFailure(Throwable error) {
        return error instanceof ConnectException;
    }

    /**
     * Nanoseconds to wait before attempt {@code attempt + 1}.
     *
     * @param attempt    attempts made so far (1 after the first failure)
     * @param retryAfter the server's {@code Retry-After} (seconds or an HTTP date), or null
     */
    long delayNanos(int attempt, String retryAfter, SplittableRandom random) {
        long step = Math.min(maxDelay.toNanos(), baseDelay.toNanos() << Math.min(attempt - 1, 30));
        long half = step / 2;
        long backoff = half + (half > 0 ? random.nextLong(half + 1) : 0);
        return Math.max(backoff, retryAfterNanos(retryAfter));
    }

    static long retryAfterNanos(String retryAfter) {
        if (retryAfter == null || retryAfter.isBlank()) {
            return 0;
        }
        String value = retryAfter.trim();
        long seconds;
        try {
            seconds = Long.parseLong(value);
        } catch (NumberFormatException notSeconds) {
            try {
                seconds = Duration.between(ZonedDateTime.now(),
                        ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)).toSeconds();
            } catch (DateTimeParseException notADate) {
                return 0;
            }
        }
        return Math.max(0, Math.min(seconds, MAX_RETRY_AFTER.toSeconds())) * 1_000_000_000L;
    }
}
