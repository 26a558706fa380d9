package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Topology;
import com.supermarket.tools.proxy.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

class ShardConsumersIT {

    private TestBroker broker;
    private TcpProxy proxy;
    private CachingConnectionFactory connections;
    private ShardConsumers consumers;
    private final Set<String> received = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void startThroughAProxy() {
        broker = TestBroker.create("shard-consumers");
        proxy = new TcpProxy(broker.host(), broker.port());
        com.rabbitmq.client.ConnectionFactory viaProxy = broker.connectionFactory();
        viaProxy.setHost(proxy.host());
        viaProxy.setPort(proxy.port());
        connections = new CachingConnectionFactory(viaProxy);
        BrokerSettings settings = broker.settings(2, Duration.ofMillis(300));
        BrokerSetup setup = new BrokerSetup(new RabbitAdmin(connections), broker.management(), broker.vhost(), settings, broker.rights());
        ChannelAwareMessageListener listener = (message, channel) -> {
            received.add(new String(message.getBody(), StandardCharsets.UTF_8));
            channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
        };
        consumers = new ShardConsumers(Topology.STORE_EXCHANGE, connections, setup,
                settings.consumers(2, 10), listener);
    }

    @AfterEach
    void stop() {
        consumers.stop();
        connections.destroy();
        proxy.close();
        broker.close();
    }

    @Test
    void waitsForAnUnreachableBrokerThenDeclaresTheTopologyAndConsumesEveryShard() {
        proxy.disconnect();
        consumers.start();

        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> !consumers.isConsuming());
        assertThat(consumers.details().get("problem")).asString().contains("cannot prepare the broker");

        proxy.restore();
        await().atMost(Duration.ofSeconds(30)).until(consumers::isConsuming);
        List<String> shards = broker.shardQueues(Topology.STORE_EXCHANGE);
        assertThat(shards).hasSize(2);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(shards).allSatisfy(shard -> assertThat(broker.consumerCount(shard)).isEqualTo(2)));

        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            for (int store = 1; store <= 20; store++) {
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Integer.toString(store), null, ("m" + store).getBytes());
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() == 20);
    }

    @Test
    void reportsNotConsumingWhileTheBrokerIsGoneAndResumesAfter() {
        consumers.start();
        await().atMost(Duration.ofSeconds(30)).until(consumers::isConsuming);

        proxy.disconnect();
        await().atMost(Duration.ofSeconds(15)).until(() -> !consumers.isConsuming());
        proxy.restore();

        // Consuming from the first restarted consumer on; the container's monitor restarts the others.
        await().atMost(Duration.ofSeconds(30)).until(consumers::isConsuming);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(consumers.details()).containsEntry("consumers", 4));
    }

    /**
     * A listener that throws leaves its delivery unacknowledged in manual-ack mode; the next
     * delivery's ack with {@code multiple} must not settle it. A delivery that fails once is
     * requeued and handled again; one that fails again is parked, never lost.
     */
    @Test
    void aDeliveryWhoseListenerThrowsIsNotAcknowledgedByTheNextMultipleAck() throws Exception {
        consumers.stop();
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        ChannelAwareMessageListener listener = (message, channel) -> {
            String body = new String(message.getBody(), StandardCharsets.UTF_8);
            int attempt = attempts.merge(body, 1, Integer::sum);
            if (body.equals("fails-always") || body.equals("fails-once") && attempt == 1) {
                throw new IllegalStateException("a bug handling " + body);
            }
            channel.basicAck(message.getMessageProperties().getDeliveryTag(), true);
            acknowledged.add(body);
        };
        BrokerSettings settings = broker.settings(2, Duration.ofMillis(300));
        consumers = new ShardConsumers(Topology.STORE_EXCHANGE, connections,
                new BrokerSetup(new RabbitAdmin(connections), broker.management(), broker.vhost(), settings, broker.rights()),
                settings.consumers(1, 10), listener);
        consumers.start();
        await().atMost(Duration.ofSeconds(30)).until(consumers::isConsuming);

        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (String body : List.of("fails-once", "fails-always", "then-acked-with-multiple")) {
                channel.basicPublish(Topology.INGRESS_EXCHANGE, "7", null, body.getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(10_000);
        }

        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertThat(acknowledged).containsExactlyInAnyOrder("fails-once", "then-acked-with-multiple");
            assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parked").isEqualTo(1);
        });
        assertThat(attempts).containsEntry("fails-once", 2).containsEntry("fails-always", 2);
        assertThat(broker.messageCountBehind(Topology.STORE_EXCHANGE)).as("left in the shard queue").isZero();
    }

    /**
     * A selection (a store partition's shard queues): nothing is consumed while it cannot choose,
     * with its reason as the problem; then only the chosen queues; and a queue it stops choosing
     * (the shard count changed) is given up.
     */
    @Test
    void consumesOnlyTheQueuesItsSelectionChoosesAndGivesUpThoseItNoLongerChooses() {
        consumers.stop();
        AtomicReference<ShardConsumers.Selection> selection = new AtomicReference<>(queues -> {
            throw new IllegalStateException("2 storeX shard queue(s) cannot be split over 3 store partitions");
        });
        BrokerSettings settings = broker.settings(2, Duration.ofMillis(300));
        consumers = new ShardConsumers(Topology.STORE_EXCHANGE, connections,
                new BrokerSetup(new RabbitAdmin(connections), broker.management(), broker.vhost(), settings, broker.rights()),
                settings.consumers(1, 10), queues -> selection.get().select(queues), (message, channel) -> { });
        consumers.start();

        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> !consumers.isConsuming());
        assertThat(consumers.details().get("problem")).asString().contains("cannot be split over 3 store partitions");

        List<String> shards = broker.shardQueues(Topology.STORE_EXCHANGE);
        selection.set(queues -> List.of(queues.getFirst()));
        await().atMost(Duration.ofSeconds(10)).until(consumers::isConsuming);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(broker.consumerCount(shards.get(0))).isEqualTo(1);
            assertThat(broker.consumerCount(shards.get(1))).isZero();
        });

        selection.set(queues -> List.of(queues.getLast()));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(broker.consumerCount(shards.get(0))).as("given up").isZero();
            assertThat(broker.consumerCount(shards.get(1))).isEqualTo(1);
        });
        assertThat(consumers.isConsuming()).isTrue();
    }
}
