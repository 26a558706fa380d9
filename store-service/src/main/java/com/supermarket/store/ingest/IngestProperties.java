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

    /**
     * Why consuming {@code shards} shard queues with a dedup window of {@code windowPerStore} ids
     * could count a redelivery twice, or null when it cannot. A store's purchases may be on any
     * of its partition's shard queues (purchase-api sends a partition's batches round them), and
     * after a connection loss every message unacknowledged on any of them may come again, all of
     * one store at worst: each store's window must hold them all.
     */
    String dedupProblem(int shards, int windowPerStore) {
        long unacknowledged = shards * unacknowledgedPurchasesPerShard();
        return windowPerStore >= unacknowledged ? null : "store.counts.dedup-window-per-store (" + windowPerStore
                + ") must be at least the purchases " + shards + " shard queue(s) may hold unacknowledged ("
                + shards + " x store.ingest.prefetch x .consumers-per-shard x .max-purchases-per-message = " + unacknowledged
                + "), or a redelivery could be counted twice: raise the window or lower the prefetch";
    }
}
