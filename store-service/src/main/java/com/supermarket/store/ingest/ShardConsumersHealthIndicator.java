package com.supermarket.store.ingest;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * Readiness of consumption ({@code shardConsumers}): up once at least one {@code storeX} shard
 * queue is consumed, so an instance that cannot see its shards is not reported ready.
 */
@Component
class ShardConsumersHealthIndicator implements HealthIndicator {

    private final ShardConsumers consumers;

    ShardConsumersHealthIndicator(ShardConsumers consumers) {
        this.consumers = consumers;
    }

    @Override
    public Health health() {
        Health.Builder health = consumers.isConsuming() ? Health.up() : Health.down();
        return health.withDetail("shards", consumers.consumedShards()).build();
    }
}
