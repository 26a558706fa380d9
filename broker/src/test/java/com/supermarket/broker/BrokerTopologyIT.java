package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class BrokerTopologyIT {

    private TestBroker broker;

    @BeforeEach
    void createVhost() {
        broker = TestBroker.create("topology");
    }

    @AfterEach
    void deleteVhost() {
        broker.close();
    }

    @Test
    void declaringTwiceIsHarmlessAndCreatesTheShards() throws Exception {
        broker.applyTopology(3);
        broker.applyTopology(3);

        assertThat(broker.shardQueues(Topology.PURCHASE_EXCHANGE)).hasSize(3)
                .allMatch(queue -> queue.startsWith("sharding: purchaseX - "));
        assertThat(broker.shardQueues(Topology.STORE_EXCHANGE)).hasSize(3);
    }

    @Test
    void onePublishToTheIngressReachesBothShardedExchangesSpreadByStore() throws Exception {
        broker.applyTopology(4);
        int stores = 64;
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int store = 1; store <= stores; store++) {
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Integer.toString(store), true,
                        new AMQP.BasicProperties.Builder().deliveryMode(2).build(), new byte[] {1});
            }
            channel.waitForConfirmsOrDie(10_000);
        }

        for (String exchange : Topology.SHARDED_EXCHANGES) {
            assertThat(broker.messageCountBehind(exchange)).as(exchange).isEqualTo(stores);
            assertThat(broker.shardQueues(exchange).stream().filter(queue -> broker.messageCount(queue) > 0))
                    .as("shards of %s holding messages", exchange).hasSizeGreaterThan(1);
        }
    }

    /**
     * The routing keys purchase-api publishes with: for N shard queues, the key of each shard
     * ({@link Topology#routingKey} of the store ids 0..N-1) lands on a shard queue of its own,
     * behind both sharded exchanges, whether the sharding plugin made the queues or the platform
     * declared and bound them.
     */
    @ParameterizedTest(name = "{0} shard queues, {1}")
    @MethodSource("shardCountsAndModes")
    void eachShardsRoutingKeyLandsOnAShardQueueOfItsOwn(int shards, BrokerSettings.TopologyMode mode) throws Exception {
        if (mode == BrokerSettings.TopologyMode.REPLICATED) {
            broker.applyReplicatedTopology(shards);
        } else {
            broker.applyTopology(shards);
        }
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int shard = 0; shard < shards; shard++) {
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(shard, shards), true,
                        new AMQP.BasicProperties.Builder().deliveryMode(2).build(), new byte[] {(byte) shard});
            }
            channel.waitForConfirmsOrDie(10_000);
        }

        for (String exchange : Topology.SHARDED_EXCHANGES) {
            List<String> queues = mode == BrokerSettings.TopologyMode.REPLICATED
                    ? Topology.replicatedShards(exchange, shards) : broker.shardQueues(exchange);
            assertThat(queues).as("shard queues of %s", exchange).hasSize(shards);
            assertThat(queues).as("messages in each shard queue of %s", exchange)
                    .allSatisfy(queue -> assertThat(broker.messageCount(queue)).as(queue).isEqualTo(1));
        }
    }

    static Stream<Arguments> shardCountsAndModes() {
        return IntStream.rangeClosed(1, 8).boxed().flatMap(shards -> Stream.of(
                Arguments.of(shards, BrokerSettings.TopologyMode.SHARDED),
                Arguments.of(shards, BrokerSettings.TopologyMode.REPLICATED)));
    }

    @Test
    void aRejectedShardMessageIsParked() throws Exception {
        broker.applyTopology(1);
        String shard = broker.shardQueues(Topology.STORE_EXCHANGE).getFirst();
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.basicPublish(Topology.INGRESS_EXCHANGE, "1", null, "poison".getBytes());
            await().atMost(Duration.ofSeconds(10)).until(() -> broker.messageCount(shard) == 1);
            GetResponse delivery = channel.basicGet(shard, false);
            channel.basicReject(delivery.getEnvelope().getDeliveryTag(), false);
        }

        await().atMost(Duration.ofSeconds(10)).until(() -> broker.messageCount(Topology.PARKING_QUEUE) == 1);
    }

    @Test
    void aParkedPoisonPurchaseLandsAloneInTheParkingQueueWithItsReason() throws Exception {
        broker.applyTopology(1);
        PurchaseBatch.Poison poison = new PurchaseBatch.Poison("{\"storeId\":0}".getBytes(), "storeId must be positive");
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            Parking.park(channel, poison, "sharding: storeX - n - 0", Duration.ofSeconds(5));

            GetResponse parked = channel.basicGet(Topology.PARKING_QUEUE, true);
            assertThat(parked.getBody()).isEqualTo(poison.json());
            assertThat(parked.getProps().getHeaders().get(Parking.REASON_HEADER)).hasToString("storeId must be positive");
            assertThat(parked.getProps().getHeaders().get(Parking.SOURCE_QUEUE_HEADER)).hasToString("sharding: storeX - n - 0");
            assertThat(parked.getProps().getDeliveryMode()).isEqualTo(2);
        }
    }

    /**
     * The parking queue keeps what it holds however often an operator looks at it and puts it
     * back: from RabbitMQ 4.0 a quorum queue (the replicated mode's parking queue) drops a message
     * after 20 deliveries unless told otherwise. A parked purchase got and rejected with requeue
     * (the management UI's "Reject, requeue") or got by a client whose channel then closed, 25
     * times, is still there.
     */
    @Test
    void aParkedPurchaseRequeuedTwentyFiveTimesIsStillThere() throws Exception {
        broker.applyReplicatedTopology(1);
        PurchaseBatch.Poison poison = new PurchaseBatch.Poison("{\"storeId\":0}".getBytes(), "storeId must be positive");
        try (Connection connection = broker.newConnection()) {
            try (Channel channel = connection.createChannel()) {
                Parking.park(channel, poison, Topology.replicatedShardName(Topology.STORE_EXCHANGE, 0), Duration.ofSeconds(5));
            }
            for (int look = 1; look <= 25; look++) {
                Channel channel = connection.createChannel();
                GetResponse parked = getWithin(channel, Topology.PARKING_QUEUE);
                assertThat(parked).as("the parked purchase at look %d", look).isNotNull();
                if (look % 2 == 0) {
                    channel.basicReject(parked.getEnvelope().getDeliveryTag(), true);
                }
                channel.close();
            }
            try (Channel channel = connection.createChannel()) {
                GetResponse parked = getWithin(channel, Topology.PARKING_QUEUE);
                assertThat(parked).as("the parked purchase after 25 looks").isNotNull();
                assertThat(parked.getBody()).isEqualTo(poison.json());
                channel.basicAck(parked.getEnvelope().getDeliveryTag(), false);
            }
        }
    }

    /**
     * A replicated shard's message whose consumer dies with it every time (its channel closes
     * unacknowledged, as when the process crashes) is dead-lettered to the parking queue after
     * the shard's delivery limit, rather than redelivered for ever.
     */
    @Test
    void aMessageThatCrashesItsConsumerEveryTimeIsParkedAfterTheDeliveryLimit() throws Exception {
        broker.applyReplicatedTopology(1);
        String shard = Topology.replicatedShardName(Topology.PURCHASE_EXCHANGE, 0);
        try (Connection connection = broker.newConnection()) {
            try (Channel channel = connection.createChannel()) {
                channel.confirmSelect();
                channel.basicPublish(Topology.INGRESS_EXCHANGE, "1", true,
                        new AMQP.BasicProperties.Builder().deliveryMode(2).build(), "crashes its consumer".getBytes());
                channel.waitForConfirmsOrDie(10_000);
            }
            // A replicated shard has a single active consumer, which basic.get may not bypass: consume.
            int deliveries = 0;
            while (deliveries <= BrokerTopology.REPLICATED_DELIVERY_LIMIT + 5) {
                Channel channel = connection.createChannel();
                BlockingQueue<Long> delivered = new LinkedBlockingQueue<>();
                channel.basicQos(1);
                channel.basicConsume(shard, false, (tag, delivery) -> delivered.add(delivery.getEnvelope().getDeliveryTag()),
                        tag -> { });
                Long delivery = delivered.poll(2, TimeUnit.SECONDS);
                channel.abort();
                if (delivery == null) {
                    break;
                }
                deliveries++;
            }
            assertThat(deliveries).as("deliveries before it left the shard")
                    .isBetween(BrokerTopology.REPLICATED_DELIVERY_LIMIT, BrokerTopology.REPLICATED_DELIVERY_LIMIT + 1);
        }
        await("the crashing message parked").atMost(Duration.ofSeconds(10))
                .until(() -> broker.messageCount(Topology.PARKING_QUEUE) == 1);
        assertThat(broker.messageCount(shard)).isZero();
    }

    /**
     * A shard queue bounded by the shard queues' policy refuses a publish once full, in both modes
     * (classic and quorum queues, RabbitMQ 4.3): the broker nacks it, while the other sharded
     * exchange's shard queue, which has room, still takes it; once the full queue is drained, a
     * publish is confirmed again.
     */
    @ParameterizedTest
    @EnumSource(BrokerSettings.TopologyMode.class)
    void aFullShardQueueNacksThePublishWhileTheOtherExchangesShardStillTakesIt(BrokerSettings.TopologyMode mode)
            throws Exception {
        int bound = 2;
        Duration interval = Duration.ofSeconds(1);
        broker.apply(new BrokerSettings(broker.managementUri(), 1, true, interval, interval, mode, 1, null)
                .withShardQueueBound(bound, 0));
        String purchaseShard = shardOf(Topology.PURCHASE_EXCHANGE, mode);
        String storeShard = shardOf(Topology.STORE_EXCHANGE, mode);
        for (String shard : List.of(purchaseShard, storeShard)) {
            await("the bound on " + shard).atMost(Duration.ofSeconds(10)).until(() -> new String(broker.management()
                    .send("GET", "api/queues/" + encode(broker.vhost()) + "/" + encode(shard), null)).contains("\"overflow\":\"reject-publish\""));
        }
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            int accepted = 0;
            while (publish(channel)) {
                accepted++;
                assertThat(accepted).as("publishes confirmed").isLessThanOrEqualTo(bound + 1);
                takeOne(channel, storeShard);
            }

            // A classic queue refuses the message that would exceed the bound; a quorum queue
            // takes it and refuses from then on, until it is back below 80 % of the bound.
            assertThat(accepted).as("publishes confirmed before the first nack")
                    .isEqualTo(mode == BrokerSettings.TopologyMode.REPLICATED ? bound + 1 : bound);
            assertThat(broker.messageCount(purchaseShard)).as("the nacked publish is not in the full queue").isEqualTo(accepted);
            takeOne(channel, storeShard);
            channel.queuePurge(purchaseShard);
            assertThat(publish(channel)).as("confirmed once the full queue was drained").isTrue();
        }
    }

    private String shardOf(String exchange, BrokerSettings.TopologyMode mode) {
        return mode == BrokerSettings.TopologyMode.REPLICATED ? Topology.replicatedShardName(exchange, 0)
                : broker.shardQueues(exchange).getFirst();
    }

    /** Publishes one purchase to the ingress and waits for its confirm: true when acked, false when nacked. */
    private static boolean publish(Channel channel) throws Exception {
        channel.basicPublish(Topology.INGRESS_EXCHANGE, "1", true, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                new byte[] {1});
        return channel.waitForConfirms(10_000);
    }

    /** Waits until {@code queue} holds one message and purges it (a replicated shard's single active consumer forbids basic.get). */
    private void takeOne(Channel channel, String queue) throws IOException {
        await("a message in " + queue).atMost(Duration.ofSeconds(10)).until(() -> broker.messageCount(queue) == 1);
        channel.queuePurge(queue);
    }

    private static String encode(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The next ready message of {@code queue} on {@code channel}, waiting up to 2 s for a requeue to land; null if none. */
    private static GetResponse getWithin(Channel channel, String queue) {
        AtomicReference<GetResponse> got = new AtomicReference<>();
        try {
            await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                    .until(() -> got.updateAndGet(ignored -> basicGet(channel, queue)) != null);
        } catch (ConditionTimeoutException none) {
            return null;
        }
        return got.get();
    }

    private static GetResponse basicGet(Channel channel, String queue) {
        try {
            return channel.basicGet(queue, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
