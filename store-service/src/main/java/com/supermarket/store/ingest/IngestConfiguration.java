package com.supermarket.store.ingest;

import com.supermarket.broker.BrokerSetup;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.contract.StorePartition;
import com.supermarket.store.counts.StoreCounts;
import com.supermarket.store.durability.CountsRecovered;
import com.supermarket.store.partition.StoreCopy;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class IngestConfiguration {

    /**
     * The shard queues of this instance's {@link StorePartition} (every one when there is one
     * partition) behind its copy group's exchange ({@link StoreCopy#exchange()}: {@code storeX}
     * for copy 0), consumed by name into the {@link PurchaseListener}, from when the counts are
     * recovered ({@link CountsRecovered}).
     * Consumes none while the dedup window could not recognise every redelivery of the shard
     * queues chosen ({@link IngestProperties#dedupProblem}): readiness then says why.
     */
    @Bean
    ShardConsumers storeShardConsumers(ConnectionFactory connectionFactory, BrokerSetup setup, IngestProperties ingest, PurchaseListener listener, StoreCounts counts,
                                       StorePartition partition, StoreCopy copy, MeterRegistry registry) {
        ShardConsumers.Selection owned = queues -> {
            List<String> chosen = partition.ownedShards(queues);
            String problem = ingest.dedupProblem(chosen.size(), counts.dedupWindowPerStore());
            if (problem != null) {
                throw new IllegalStateException(problem);
            }
            return chosen;
        };
        ShardConsumers consumers = new ShardConsumers(copy.exchange(), connectionFactory, setup,
                setup.settings().consumers(ingest.consumersPerShard(), ingest.prefetch()), owned, listener);
        consumers.setAutoStartup(false);
        Gauge.builder("store.shards.consumed", consumers, ShardConsumers::shardCount)
                .description("Shard queues of storeX (or this copy group's store exchange) this instance consumes")
                .register(registry);
        return consumers;
    }

    /** Starts consuming once the counts are recovered: a purchase counted before would be lost to the recovery. */
    @Bean
    ApplicationListener<CountsRecovered> consumeWhenRecovered(ShardConsumers consumers) {
        return recovered -> consumers.start();
    }

    /**
     * Readiness of consumption ({@code shardConsumers}): DOWN until the broker is prepared and a
     * {@code storeX} shard queue is consumed, with the reason in the details.
     */
    @Bean
    HealthIndicator shardConsumers(ShardConsumers consumers) {
        return () -> (consumers.isConsuming() ? Health.up() : Health.down()).withDetails(consumers.details()).build();
    }
}
