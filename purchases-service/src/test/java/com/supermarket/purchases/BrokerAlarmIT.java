package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.HeldMessages;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestNode;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A memory alarm on the broker node (a private one: an alarm blocks every publisher of its node)
 * while purchases-service has a poison purchase to park. The broker then stops reading from the
 * connection that publishes, acks included, so the shard consumers must be on a connection that
 * never publishes: every shard but the poison's must keep draining while the alarm holds, and the
 * poison is parked once it clears. The purchases reach the broker before the alarm and are let
 * through to the shards during it ({@link HeldMessages}). On the {@code mysql} profile, in a
 * database of its own on the test MariaDB.
 */
class BrokerAlarmIT {

    private static final int SHARDS = 3;
    /**
     * How long a drained state must last: longer than the management API's sampling interval
     * (5 s), so that a sample from before the purchases arrived cannot pass for it.
     */
    private static final Duration SAMPLED = Duration.ofSeconds(7);
    private static final String DATABASE = "purchases_it_alarm_" + UUID.randomUUID().toString().substring(0, 8);
    private static final TestServices.Database MARIADB = TestServices.mariaDb();

    private static TestNode node;
    private static TestBroker broker;
    private static PurchasesServiceRunner service;

    @BeforeAll
    static void start() {
        node = TestNode.start("purchases-alarm");
        broker = node.broker("purchases-alarm");
        service = new PurchasesServiceRunner("mysql", broker, Map.of(
                "platform.broker.shards-per-node", Integer.toString(SHARDS),
                "spring.datasource.url", MARIADB.jdbcUrl(DATABASE + "?createDatabaseIfNotExist=true"),
                "spring.datasource.username", MARIADB.username(),
                "spring.datasource.password", MARIADB.password()));
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (service != null) {
                service.close();
            }
            try (Connection connection = DriverManager.getConnection(MARIADB.jdbcUrl(""), MARIADB.username(), MARIADB.password())) {
                connection.createStatement().execute("DROP DATABASE IF EXISTS " + DATABASE);
            }
        } finally {
            if (node != null) {
                node.close();
            }
        }
    }

    @Test
    void theShardsKeepDrainingWhileParkingAPoisonPurchaseIsBlockedByAMemoryAlarm() {
        await().atMost(Duration.ofSeconds(60)).until(() -> service.readinessStatus() == 200
                && broker.shardQueues(Topology.PURCHASE_EXCHANGE).size() == SHARDS);
        HeldMessages held = broker.held("alarm-poison", Topology.INGRESS_EXCHANGE);
        Purchase besideThePoison = TestPurchases.atStore(7);
        TestPurchases.publishBatchBody(broker.newConnection(), held.exchange(), Integer.toString(besideThePoison.storeId()),
                PurchaseBatch.frame(List.of(WireFormat.encode(besideThePoison), "{\"purchaseId\":\"nope\"}".getBytes(StandardCharsets.UTF_8))));
        List<Purchase> purchases = TestPurchases.random(600);
        TestPurchases.publish(broker.newConnection(), held.exchange(), purchases);
        long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);

        node.raiseMemoryAlarm();
        try {
            held.release();

            // The poison's shard moves on slowly meanwhile: each failed park waits for its timeout,
            // then the message is requeued behind what its consumer holds.
            await("every shard but the poison's drained while the alarm holds").during(SAMPLED).atMost(Duration.ofSeconds(45))
                    .untilAsserted(() -> assertThat(shardsHoldingMessages()).as("shards holding messages").hasSizeLessThanOrEqualTo(1));
            assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parking waits for the alarm").isEqualTo(parkedBefore);
        } finally {
            node.clearMemoryAlarm();
        }

        await("the poison parked and every purchase stored, once the alarm cleared").atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> {
                    assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parked at least once: a park that timed out under the alarm may still land")
                            .isGreaterThan(parkedBefore);
                    assertThat(service.storedCount()).isEqualTo(purchases.size() + 1);
                    assertThat(shardsHoldingMessages()).as("shards holding messages").isEmpty();
                });
    }

    private static Map<String, Long> shardsHoldingMessages() {
        Map<String, Long> holding = new TreeMap<>();
        for (String shard : broker.shardQueues(Topology.PURCHASE_EXCHANGE)) {
            long messages = node.messagesReadyOrUnacknowledged(broker.vhost(), shard);
            if (messages != 0) {
                holding.put(shard, messages);
            }
        }
        return holding;
    }
}
