package com.supermarket.purchases.ingest;

import com.supermarket.contract.BrokerSetup;
import com.supermarket.contract.ShardConsumers;
import com.supermarket.contract.Topology;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
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
}
