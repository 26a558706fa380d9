package com.supermarket.purchases.ingest;

import com.supermarket.contract.ShardConsumers;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * Readiness of consumption ({@code shardConsumers}): DOWN until the broker is prepared and a
 * {@code purchaseX} shard queue is consumed, with the reason in the details.
 */
@Component("shardConsumers")
class ShardConsumersHealthIndicator implements HealthIndicator {

    private final ShardConsumers consumers;

    ShardConsumersHealthIndicator(ShardConsumers consumers) {
        this.consumers = consumers;
    }

    @Override
    public Health health() {
        return (consumers.isConsuming() ? Health.up() : Health.down()).withDetails(consumers.details()).build();
    }
}
