package com.supermarket.purchases.ingest;

import com.supermarket.broker.BrokerSetup;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.contract.Topology;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class IngestConfiguration {

    @Bean
    StorageState storageState() {
        return new StorageState();
    }

    /** Every {@code purchaseX} shard queue, consumed by name into the {@link PurchaseBatchListener}. */
    @Bean
    ShardConsumers purchaseShardConsumers(ConnectionFactory connectionFactory, BrokerSetup setup, IngestProperties ingest,
                                          PurchaseBatchListener listener) {
        return new ShardConsumers(Topology.PURCHASE_EXCHANGE, connectionFactory, setup,
                setup.settings().consumers(ingest.consumersPerShard(), ingest.prefetch()), listener);
    }

    /**
     * Readiness of consumption ({@code shardConsumers}): DOWN until the broker is prepared and a
     * {@code purchaseX} shard queue is consumed, with the reason in the details.
     */
    @Bean
    HealthIndicator shardConsumers(ShardConsumers consumers) {
        return () -> (consumers.isConsuming() ? Health.up() : Health.down()).withDetails(consumers.details()).build();
    }
}
