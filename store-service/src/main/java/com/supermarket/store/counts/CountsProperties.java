package com.supermarket.store.counts;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the in-memory counts.
 *
 * @param dedupWindowPerStore how many recent purchase ids each store remembers to skip
 *                            redeliveries; must cover the purchases of one store that can be
 *                            unacknowledged at once (prefetch x consumers per shard), checked at
 *                            startup
 */
@ConfigurationProperties("store.counts")
record CountsProperties(int dedupWindowPerStore) {

    CountsProperties {
        if (dedupWindowPerStore < 1) {
            throw new IllegalArgumentException("store.counts.dedup-window-per-store must be positive");
        }
    }
}
