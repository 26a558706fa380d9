package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestCluster;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * purchases-service ({@code mysql} profile, a database of its own) in the {@code replicated}
 * mode on the real three-node cluster, connected first to the node leading most shard queues,
 * which the test kills while purchases stream in and starts again later: the shard consumers
 * re-attach through a surviving node and every confirmed purchase is stored, once.
 */
class NodeLossIT {

    private static final int SHARDS = 4;
    private static final String DATABASE = "purchases_it_" + UUID.randomUUID().toString().substring(0, 8);
    private static final TestServices.Database MARIADB = TestServices.mariaDb();
    private static TestCluster cluster;
    private static PurchasesServiceRunner service;
    private static int victim;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start("purchases-node-loss");
        cluster.declareReplicatedTopology(SHARDS);
        victim = cluster.nodeLeadingMostQueues();
        Map<String, String> properties = new HashMap<>(cluster.springProperties(victim));
        properties.put("platform.broker.replicated-shards", Integer.toString(SHARDS));
        service = new PurchasesServiceRunner("mysql", properties, Map.of(
                "spring.datasource.url", MARIADB.jdbcUrl(DATABASE + "?createDatabaseIfNotExist=true"),
                "spring.datasource.username", MARIADB.username(),
                "spring.datasource.password", MARIADB.password(),
                "purchases.ingest.consumers-per-shard", "2"));
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (service != null) {
                service.close();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
            try (Connection connection = DriverManager.getConnection(MARIADB.jdbcUrl(""), MARIADB.username(), MARIADB.password())) {
                connection.createStatement().execute("DROP DATABASE IF EXISTS " + DATABASE);
            }
        }
    }

    @Test
    void everyConfirmedPurchaseIsStoredOnceWhenTheNodeTheConsumersUseDiesAndReturns() {
        await().atMost(Duration.ofSeconds(60)).until(() -> service.readinessStatus() == 200);
        int survivor = victim % 3 + 1;
        int published = 0;
        for (int round = 0; round < 4; round++) {
            List<Purchase> purchases = TestPurchases.random(500);
            // Returns once every purchase is confirmed: on a majority of the nodes. A nack (what
            // purchase-api answers 503) is retried with the same purchases, as a client would.
            await("round " + round + " confirmed").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1))
                    .ignoreExceptionsMatching(e -> e instanceof IllegalStateException && e.getMessage().startsWith("publishing"))
                    .until(() -> {
                        TestPurchases.publish(cluster.newConnection(survivor), purchases);
                        return true;
                    });
            published += purchases.size();
            if (round == 0) {
                cluster.stopNode(victim);
            } else if (round == 2) {
                cluster.startNode(victim);
            }
        }

        int expected = published;
        await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> assertThat(service.storedCount()).isEqualTo(expected));
        await("consumers back on every shard").atMost(Duration.ofSeconds(30)).until(() -> service.readinessStatus() == 200);
    }
}
