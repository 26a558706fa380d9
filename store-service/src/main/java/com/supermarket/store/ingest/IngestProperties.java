package com.supermarket.store.ingest;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How the {@code storeX} shard queues are consumed.
 *
 * @param consumersPerShard  consumers on each shard queue
 * @param prefetch           unacknowledged messages each consumer may hold
 * @param rediscoverInterval how often the shard queues are listed again, to consume new ones
 */
@ConfigurationProperties("store.ingest")
record IngestProperties(int consumersPerShard, int prefetch, Duration rediscoverInterval) {

    IngestProperties {
        if (consumersPerShard < 1 || prefetch < 1) {
            throw new IllegalArgumentException("store.ingest.consumers-per-shard and store.ingest.prefetch must be positive");
        }
        if (rediscoverInterval == null || rediscoverInterval.isNegative() || rediscoverInterval.isZero()) {
            throw new IllegalArgumentException("store.ingest.rediscover-interval must be positive");
        }
    }
}
