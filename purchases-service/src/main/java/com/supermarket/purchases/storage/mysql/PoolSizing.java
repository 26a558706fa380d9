package com.supermarket.purchases.storage.mysql;

import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerSetup;
import com.supermarket.purchases.ingest.IngestProperties;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * Checks at startup that the connection pool matches the consumer concurrency (consumers per
 * shard x shards per node): every consumer holds one connection for its message's transaction,
 * and the readiness check and the lookups need one more. A smaller pool makes consumers wait on the pool (and time out as if
 * the database were down); a much larger one only loads the database.
 */
@Component
@Profile("mysql")
class PoolSizing {

    private static final Logger log = LoggerFactory.getLogger(PoolSizing.class);

    PoolSizing(DataSource dataSource, IngestProperties ingest, BrokerSetup broker) {
        if (dataSource instanceof HikariDataSource hikari) {
            int pool = hikari.getMaximumPoolSize();
            // A replicated shard has one active consumer whatever the consumers per shard.
            int writers = broker.settings().topologyMode() == BrokerSettings.TopologyMode.REPLICATED
                    ? broker.settings().replicatedShards() : ingest.writersPerNode(broker.settings().shardsPerNode());
            if (pool < writers + 1) {
                log.warn("Connection pool of {} for {} consumers: consumers will wait for connections; set MYSQL_POOL_SIZE "
                        + "to PURCHASES_INGEST_CONSUMERS_PER_SHARD x BROKER_SHARDS_PER_NODE + 2 (replicated: BROKER_REPLICATED_SHARDS + 2) = {}", pool, writers, writers + 2);
            } else {
                log.info("Connection pool of {} for {} consumers", pool, writers);
            }
        }
    }
}
