package com.supermarket.store.counts;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the in-memory counts.
 *
 * @param dedupWindowPerStore how many recent purchase ids each store remembers to skip
 *                            redeliveries and retries; must cover the purchases of one store
 *                            that can be unacknowledged at once (prefetch x consumers per shard),
 *                            checked at startup, and should cover a store's sales within the
 *                            dedup horizon (28 bytes per id per store)
 * @param dedupHorizon        how long a purchase id is promised to be remembered: at least the
 *                            purchase-api's {@code api.idempotency.ttl}, the longest a till retries
 *                            with the same key; ids the window forgets sooner are counted
 *                            ({@code store_dedup_forgotten_early_total})
 */
@ConfigurationProperties("store.counts")
record CountsProperties(int dedupWindowPerStore, Duration dedupHorizon) {

    CountsProperties {
        if (dedupWindowPerStore < 1) {
            throw new IllegalArgumentException("store.counts.dedup-window-per-store must be positive");
        }
        if (dedupHorizon == null || dedupHorizon.isNegative()) {
            throw new IllegalArgumentException("store.counts.dedup-horizon must not be negative");
        }
    }
}
