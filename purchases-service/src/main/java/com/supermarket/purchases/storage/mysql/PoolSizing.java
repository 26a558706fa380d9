package com.supermarket.purchases.storage.mysql;

import com.supermarket.purchases.ingest.IngestProperties;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * Checks at startup that the connection pool matches the consumer concurrency: every consumer
 * thread holds one connection for its batch's transaction, and the readiness check and the
 * lookups need one more. A smaller pool makes consumers wait on the pool (and time out as if
 * the database were down); a much larger one only loads the database.
 */
@Component
@Profile("mysql")
class PoolSizing {

    private static final Logger log = LoggerFactory.getLogger(PoolSizing.class);

    PoolSizing(DataSource dataSource, IngestProperties ingest) {
        if (dataSource instanceof HikariDataSource hikari) {
            int pool = hikari.getMaximumPoolSize();
            int wanted = ingest.concurrency() + 2;
            if (pool < ingest.concurrency() + 1) {
                log.warn("Connection pool of {} for {} consumer threads: consumers will wait for connections; "
                        + "set MYSQL_POOL_SIZE to INGEST_CONCURRENCY + 2 = {}", pool, ingest.concurrency(), wanted);
            } else {
                log.info("Connection pool of {} for {} consumer threads", pool, ingest.concurrency());
            }
        }
    }
}
