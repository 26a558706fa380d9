package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.Topology;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A database stall longer than the broker's consumer timeout, in the replicated mode (quorum
 * shard queues, which from RabbitMQ 4.3 evaluate the timeout themselves: the consumer is
 * cancelled and what it holds is delivered again): the service's writes hang on a table lock
 * for five timeouts while purchases keep arriving; once the lock is gone every purchase is
 * stored exactly once and none is parked. The shard queues' consumer timeout is a policy of
 * {@value #TIMEOUT_MILLIS} ms here (30 minutes by default).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsumerTimeoutIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final int TIMEOUT_MILLIS = 3_000;
    /** The stall: five consumer timeouts. */
    private static final Duration STALL = Duration.ofMillis(5L * TIMEOUT_MILLIS);
    private static final String DATABASE = "purchases";

    private PrivateMariaDb mariaDb;
    private TestBroker broker;
    private PurchasesServiceRunner service;

    @BeforeAll
    void start() throws Exception {
        mariaDb = PrivateMariaDb.start();
        mariaDb.asRoot("CREATE DATABASE " + DATABASE);
        broker = TestBroker.create("purchases-consumer-timeout");
        // Before the service consumes: a consumer takes the timeout its queue has when it attaches.
        broker.management().putPolicy(broker.vhost(), "consumer-timeout",
                "^" + Topology.PURCHASE_EXCHANGE + "\\.shard\\.", "queues", 20, Map.of("consumer-timeout", TIMEOUT_MILLIS));
        service = new PurchasesServiceRunner("mysql", broker, Map.of(
                "platform.broker.topology-mode", "replicated",
                "platform.broker.replicated-shards", "2",
                "spring.datasource.url", mariaDb.jdbcUrl(DATABASE),
                "spring.datasource.username", mariaDb.rootUser(),
                "spring.datasource.password", mariaDb.rootPassword(),
                "spring.datasource.hikari.maximum-pool-size", "4"));
        await("readiness UP").atMost(PATIENCE).until(() -> service.readinessStatus() == 200);
    }

    @AfterAll
    void stop() throws Exception {
        try (PrivateMariaDb database = mariaDb; TestBroker vhost = broker) {
            if (service != null) {
                service.close();
            }
        }
    }

    @Test
    void aDatabaseStallLongerThanTheConsumerTimeoutLosesNothingAndStoresEachPurchaseOnce() throws Exception {
        long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);
        Set<String> consumersWhenLocked;
        PurchaseStream stream = new PurchaseStream(broker);
        try (stream) {
            await("the stream is being stored").atMost(PATIENCE).until(() -> storedIds().size() >= 50);

            // A read lock: the service's inserts wait for it, reads (this test's) do not.
            try (Connection lock = mariaDb.rootConnection(); Statement statement = lock.createStatement()) {
                statement.execute("LOCK TABLES " + DATABASE + ".purchase READ");
                int storedWhenLocked = storedIds().size();
                int publishedWhenLocked = stream.size();
                consumersWhenLocked = consumerTags();
                await("nothing stored for the whole stall").during(STALL).atMost(STALL.plusSeconds(10))
                        .until(() -> storedIds().size() == storedWhenLocked);
                assertThat(stream.size()).as("published during the stall").isGreaterThan(publishedWhenLocked + 50);
                statement.execute("UNLOCK TABLES");
            }
            // The broker cancels a consumer past the timeout; the service sees it once its listener
            // is free again, and starts a new one (a consumer keeps its tag otherwise).
            await("the shard consumers cancelled by the consumer timeout and started again").atMost(PATIENCE)
                    .until(() -> !consumerTags().isEmpty() && consumerTags().stream().noneMatch(consumersWhenLocked::contains));
            stream.awaitMore(50, PATIENCE);
        }

        List<UUID> publishedIds = stream.published().stream().map(Purchase::purchaseId).toList();
        await("every purchase stored").atMost(PATIENCE).until(() -> storedIds().containsAll(publishedIds));
        assertThat(storedIds()).as("each purchase stored exactly once").doesNotHaveDuplicates()
                .hasSameSizeAs(publishedIds).containsAll(publishedIds);
        assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parked").isEqualTo(parkedBefore);
        await("readiness UP").atMost(PATIENCE).until(() -> service.readinessStatus() == 200);
    }

    /** The tags of the consumers in the vhost now. */
    private Set<String> consumerTags() {
        return Set.copyOf(List.of(TestServices.rabbitmqctl("list_consumers", "-p", broker.vhost(), "consumer_tag", "--no-table-headers")
                .strip().split("\\s+")));
    }

    private List<UUID> storedIds() throws SQLException {
        return mariaDb.purchaseIds(DATABASE);
    }
}
