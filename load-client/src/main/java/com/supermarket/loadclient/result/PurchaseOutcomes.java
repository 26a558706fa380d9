package com.supermarket.loadclient.result;

/**
 * What became of the run's purchases, counted per purchase (per {@code Idempotency-Key}), not per
 * attempt: the input of the exactly-once rule of {@code verify}. Every purchase the stores sent
 * is in exactly one of the first three counts. Immutable.
 *
 * @param accepted      purchases some attempt of which was answered 2xx (201)
 * @param maybeAccepted purchases never answered 2xx, some attempt of which got an answer that
 *                      promises nothing either way: a 5xx (a 503 after a lost confirm may have
 *                      reached the broker), a timeout, a connection closed or reset after the
 *                      request could have been sent, a malformed answer
 * @param refused       purchases whose every attempt was refused for sure: a 4xx, or a connection
 *                      that could not be opened
 * @param lateRetries   the late re-sends of accepted purchases ({@code run --late-retries}); they
 *                      are the same purchases again and add to none of the counts above
 */
public record PurchaseOutcomes(long accepted, long maybeAccepted, long refused, LateRetries lateRetries) {

    public PurchaseOutcomes {
        lateRetries = lateRetries == null ? LateRetries.none() : lateRetries;
    }

    /**
     * Accepted purchases sent again late, with the same {@code Idempotency-Key}, path and body,
     * as a till does after a lost 201. Immutable.
     *
     * @param stores   stores asked to re-send their first accepted purchase
     * @param sent     late re-sends made (fewer than {@code stores} when a store had no accepted purchase)
     * @param answered late re-sends answered 2xx
     * @param failed   late re-sends that failed for good (after their own retries)
     */
    public record LateRetries(int stores, long sent, long answered, long failed) {

        public static LateRetries none() {
            return new LateRetries(0, 0, 0, 0);
        }
    }
}
