package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.broker.testing.HeldMessages;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestNode;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A memory alarm on the broker node (a private one: an alarm blocks every publisher of its node)
 * while store-service has a reply or a parked purchase to publish. The broker then stops reading
 * from the connection that publishes, acks included, so the shard consumers must be on a
 * connection that never publishes: the shards must keep draining while the alarm holds, and what
 * was blocked is delivered once it clears. The purchases and the query reach the broker before
 * the alarm and are let through to the service's queues during it ({@link HeldMessages}), so that
 * the reply or the parking is attempted while purchases still wait in the shards.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
class BrokerAlarmIT {

    private static final TestNode NODE = TestNode.start("store-alarm");
    private static final TestBroker BROKER = NODE.broker("store-alarm");
    private static final int SHARDS = 3;
    private static final ExpectedCounts EXPECTED = new ExpectedCounts(8, 20, 35);
    private static final Duration WHILE_THE_ALARM_HOLDS = Duration.ofSeconds(45);
    /**
     * How long a drained state must last: longer than the management API's sampling interval
     * (5 s), so that a sample from before the purchases arrived cannot pass for it.
     */
    private static final Duration SAMPLED = Duration.ofSeconds(7);

    private static Connection connection;
    private static Channel channel;

    @Autowired
    StoreCounts counts;

    @Autowired
    ShardConsumers consumers;

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        BROKER.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("platform.broker.shards-per-node", () -> SHARDS);
        registry.add("platform.broker.discovery-interval", () -> "500ms");
        ExpectedCounts.manyUnacknowledged(registry);
    }

    @TestConfiguration
    static class StopTheNodeAtShutdown {
        /** Closed with the context, after the consumers have stopped. */
        @Bean(destroyMethod = "close")
        TestNode testNode() {
            return NODE;
        }
    }

    @BeforeAll
    static void connect() throws Exception {
        connection = BROKER.newConnection();
        channel = connection.createChannel();
        channel.confirmSelect();
    }

    @AfterAll
    static void disconnect() throws Exception {
        connection.close();
    }

    @BeforeEach
    void consuming() {
        await().atMost(Duration.ofSeconds(60)).until(() -> consumers.isConsuming() && consumers.shardCount() == SHARDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> channel.consumerCount(Topology.STORE_RPC_QUEUE) > 0);
    }

    @Test
    void theShardsKeepDrainingWhileAQueryReplyIsBlockedByAMemoryAlarm() throws Exception {
        HeldMessages purchases = BROKER.held("alarm-purchases", Topology.INGRESS_EXCHANGE);
        HeldMessages queries = BROKER.held("alarm-queries", "");
        String replies = channel.queueDeclare().getQueue();
        EXPECTED.publish(channel, purchases.exchange(), 1_000);
        channel.basicPublish(queries.exchange(), Topology.STORE_RPC_QUEUE, new AMQP.BasicProperties.Builder()
                .contentType(WireFormat.CONTENT_TYPE).type(StoreQueries.MESSAGE_TYPE).correlationId("during-the-alarm")
                .replyTo(replies).build(),
                WireFormat.encode(new StoreQueries(List.of(new StoreQuery(StoreQuery.Kind.TOP_ITEMS_AT_STORE, 1, 5)))));
        channel.waitForConfirmsOrDie(10_000);

        NODE.raiseMemoryAlarm();
        try {
            queries.release();
            await("a connection blocked by the reply").atMost(Duration.ofSeconds(30))
                    .until(() -> NODE.connectionStates(BROKER.vhost()).contains("blocked"));
            purchases.release();

            await("every purchase counted and acknowledged while the alarm holds").during(SAMPLED).atMost(WHILE_THE_ALARM_HOLDS)
                    .untilAsserted(() -> {
                        EXPECTED.assertExact(counts);
                        assertShardsDrained();
                    });
            assertThat(channel.queueDeclarePassive(replies).getMessageCount()).as("the reply waits for the alarm").isZero();
        } finally {
            NODE.clearMemoryAlarm();
        }

        await("the reply, once the alarm cleared").atMost(Duration.ofSeconds(30))
                .until(() -> channel.queueDeclarePassive(replies).getMessageCount() == 1);
        GetResponse reply = channel.basicGet(replies, true);
        assertThat(reply.getProps().getCorrelationId()).isEqualTo("during-the-alarm");
        assertThat(WireFormat.decode(reply.getBody(), StoreQueries.Replies.class).replies()).singleElement()
                .extracting(StoreQueryReply::status).isEqualTo(StoreQueryReply.Status.OK);
    }

    @Test
    void theShardsKeepDrainingWhileParkingAPoisonPurchaseIsBlockedByAMemoryAlarm() throws Exception {
        HeldMessages purchases = BROKER.held("alarm-poison", Topology.INGRESS_EXCHANGE);
        long parkedBefore = channel.queueDeclarePassive(Topology.PARKING_QUEUE).getMessageCount();
        Purchase poison = new Purchase(UUID.randomUUID(), 5_000, 5_000_000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(1, 1)), Instant.now());
        channel.basicPublish(purchases.exchange(), Integer.toString(poison.storeId()), new AMQP.BasicProperties.Builder()
                .contentType(WireFormat.CONTENT_TYPE).type(PurchaseBatch.MESSAGE_TYPE).messageId(poison.purchaseId().toString())
                .deliveryMode(2).build(), PurchaseBatch.frame(List.of(WireFormat.encode(poison))));
        EXPECTED.publish(channel, purchases.exchange(), 1_000);
        channel.waitForConfirmsOrDie(10_000);

        NODE.raiseMemoryAlarm();
        try {
            purchases.release();

            // The poison's shard holds it, and what was delivered with it, until it can be parked.
            await("every shard but the poison's drained while the alarm holds").during(SAMPLED).atMost(WHILE_THE_ALARM_HOLDS)
                    .untilAsserted(() -> {
                        Map<String, Long> holding = shardsHoldingMessages();
                        assertThat(holding).as("shards holding messages").hasSizeLessThanOrEqualTo(1);
                        assertThat(holding.values()).allSatisfy(held -> assertThat(held)
                                .isLessThanOrEqualTo(consumers.settings().unacknowledgedPerShard()));
                    });
            assertThat(channel.queueDeclarePassive(Topology.PARKING_QUEUE).getMessageCount())
                    .as("parking waits for the alarm").isEqualTo(parkedBefore);
        } finally {
            NODE.clearMemoryAlarm();
        }

        await("the poison parked and every shard drained, once the alarm cleared").atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> {
                    assertThat((long) channel.queueDeclarePassive(Topology.PARKING_QUEUE).getMessageCount())
                            .as("parked at least once: a park that timed out under the alarm may still land")
                            .isGreaterThan(parkedBefore);
                    assertShardsDrained();
                });
        EXPECTED.assertExact(counts);
    }

    private static Map<String, Long> shardsHoldingMessages() {
        Map<String, Long> holding = new TreeMap<>();
        for (String shard : BROKER.shardQueues(Topology.STORE_EXCHANGE)) {
            long messages = NODE.messagesReadyOrUnacknowledged(BROKER.vhost(), shard);
            if (messages != 0) {
                holding.put(shard, messages);
            }
        }
        return holding;
    }

    private static void assertShardsDrained() {
        assertThat(shardsHoldingMessages()).as("shards holding messages").isEmpty();
    }
}
