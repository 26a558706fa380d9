package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.Topology;
import com.supermarket.tools.proxy.TcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The storage scenarios on the {@code mysql} profile, against the real test MariaDB through
 * Connector/J, in a database of its own. The service reaches MariaDB through a {@link TcpProxy},
 * which the outage scenario cuts (every connection reset, new ones refused) and restores: to the
 * service that is a database outage, while the shared MariaDB, which other tests use at the same
 * time, keeps running.
 */
class MysqlStorageIT extends StorageScenarios {

    private static final TestServices.Database MARIADB = TestServices.mariaDb();
    private static final Duration DATABASE_LATE_BY = Duration.ofSeconds(3);
    private final String database = "purchases_it_" + UUID.randomUUID().toString().substring(0, 8);
    private TcpProxy proxy;
    private Instant databaseReachableFrom;

    /** Backend-independent, so it runs on one profile only. */
    @Test
    void shardQueuesAddedLaterAreConsumedToo() {
        List<String> before = broker.shardQueues(Topology.PURCHASE_EXCHANGE);
        broker.management().putPolicy(broker.vhost(), Topology.shardingPolicyName(Topology.PURCHASE_EXCHANGE),
                "^" + Topology.PURCHASE_EXCHANGE + "$", "exchanges", 10,
                Map.of("shards-per-node", before.size() + 1, "routing-key", "shard"));
        await("a new shard queue").atMost(Duration.ofSeconds(30))
                .until(() -> broker.shardQueues(Topology.PURCHASE_EXCHANGE).size() > before.size());
        List<String> added = new ArrayList<>(broker.shardQueues(Topology.PURCHASE_EXCHANGE));
        added.removeAll(before);

        await("the service consumes the new shard").atMost(Duration.ofSeconds(60))
                .until(() -> added.stream().allMatch(queue -> broker.consumerCount(queue) > 0));
        long stored = service.storedCount();
        List<Purchase> purchases = TestPurchases.random(200);
        TestPurchases.publish(broker, purchases);

        await().atMost(Duration.ofSeconds(90)).until(() -> service.storedCount() == stored + purchases.size());
        assertThat(added).allMatch(queue -> broker.messageCount(queue) == 0);
    }

    @Override
    String profile() {
        return "mysql";
    }

    @Test
    void theServiceWaitedAtStartupForTheDatabase() {
        // startBackend() cut the database off for the service's first seconds.
        assertThat(service.startedAt()).isAfter(databaseReachableFrom);
        // ... and migrated it then: counting its purchase table works.
        assertThat(service.storedCount()).isNotNegative();
    }

    @Override
    Map<String, String> startBackend() {
        proxy = new TcpProxy(MARIADB.host(), MARIADB.port());
        // The service starts while the database refuses connections, as after a joint restart
        // where the database comes up last: its migration waits (MYSQL_CONNECT_RETRIES) instead
        // of the process exiting.
        proxy.cut(DATABASE_LATE_BY);
        databaseReachableFrom = Instant.now().plus(DATABASE_LATE_BY);
        return Map.of(
                "spring.datasource.url", "jdbc:mysql://" + proxy.host() + ":" + proxy.port() + "/" + database
                        + "?createDatabaseIfNotExist=true",
                "spring.datasource.username", MARIADB.username(),
                "spring.datasource.password", MARIADB.password(),
                "spring.datasource.hikari.maximum-pool-size", "4");
    }

    @Override
    void stopBackend() throws SQLException {
        if (proxy != null) {
            proxy.close();
        }
        try (Connection connection = DriverManager.getConnection(MARIADB.jdbcUrl(""), MARIADB.username(), MARIADB.password())) {
            connection.createStatement().execute("DROP DATABASE IF EXISTS " + database);
        }
    }

    @Override
    void makeStoreUnavailable() {
        proxy.disconnect();
    }

    @Override
    void restoreStore() {
        proxy.restore();
    }
}
