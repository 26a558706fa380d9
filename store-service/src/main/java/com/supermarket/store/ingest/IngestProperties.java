package com.supermarket.store.ingest;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How the {@code storeX} shard queues are consumed (the discovery and retry intervals are the
 * shared {@code platform.broker.*}).
 *
 * @param consumersPerShard       consumers on each shard queue
 * @param prefetch                unacknowledged messages each consumer may hold
 * @param maxPurchasesPerMessage  the most purchases one message may carry; purchase-api's batch cap
 *                                must not exceed it, since the dedup window is sized from it
 */
@ConfigurationProperties("store.ingest")
record IngestProperties(int consumersPerShard, int prefetch, int maxPurchasesPerMessage) {

    IngestProperties {
        if (consumersPerShard < 1 || prefetch < 1 || maxPurchasesPerMessage < 1) {
            throw new IllegalArgumentException("store.ingest.consumers-per-shard, .prefetch and "
                    + ".max-purchases-per-message must be positive");
        }
    }

    /** The most purchases one shard queue can have unacknowledged at this service. */
    long unacknowledgedPurchasesPerShard() {
        return (long) consumersPerShard * prefetch * maxPurchasesPerMessage;
    }
}
