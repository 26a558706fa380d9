package com.supermarket.purchases.storage.mysql;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * Checks at startup that the connection pool has room for the group writer, which holds one
 * connection for a group's transaction, and for the readiness check and the lookups beside it.
 * A smaller pool makes them wait on the pool (and time out as if the database were down); a
 * larger one only holds idle connections.
 */
@Component
@Profile("mysql")
class PoolSizing {

    private static final Logger log = LoggerFactory.getLogger(PoolSizing.class);
    /** The writer's connection, the readiness check's and a lookup's. */
    static final int LEAST = 3;

    PoolSizing(DataSource dataSource) {
        if (dataSource instanceof HikariDataSource hikari) {
            int pool = hikari.getMaximumPoolSize();
            if (pool < LEAST) {
                log.warn("Connection pool of {}: the writer and the lookups will wait for connections; set MYSQL_POOL_SIZE "
                        + "to {} or more", pool, LEAST);
            } else {
                log.info("Connection pool of {} for the writer and the lookups", pool);
            }
        }
    }
}
