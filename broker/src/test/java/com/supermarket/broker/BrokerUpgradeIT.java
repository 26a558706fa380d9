package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.RabbitMqVersion;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestNode;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The upgrade an operator of the chart's first release does (docs/operations.md, "Upgrading
 * RabbitMQ"): RabbitMQ 4.3 upgrades in place only from 4.2, so the platform moves blue-green.
 * A node of the older RabbitMQ ("blue", {@link TestNode#startOlder}) holds the platform's vhost as
 * that release left it (the replicated topology, the services' users, purchases in every shard
 * queue, a parked one); a node of the project's version ("green") is given blue's definitions
 * (exported and imported over the management API), the new release's set-up runs over them
 * without a conflict, and one shovel per queue moves the messages. Nothing is lost, nothing
 * doubled, every message stays in its shard queue, and each service's user logs in on green
 * with its old password and finds what it works with.
 */
class BrokerUpgradeIT {

    private static final int SHARDS = 4;
    private static final int PURCHASES = 200;
    private static final Duration PATIENCE = Duration.ofSeconds(90);

    @Test
    void aBlueGreenMoveCarriesTheDefinitionsAndEveryDurableMessage() throws Exception {
        try (TestNode blueNode = TestNode.startOlder("upgrade-blue"); TestNode greenNode = TestNode.start("upgrade-green");
             TestBroker blue = blueNode.broker("platform")) {
            assertThat(greenNode.version()).isEqualTo(RabbitMqVersion.version());
            assertThat(blueNode.version()).as("blue is older").isNotEqualTo(greenNode.version());

            // Blue as the first release left it: its topology (no parking policy then), its users, its messages.
            declare(blue, false);
            List<TestBroker> users = BrokerUsers.ALL.stream().map(blue::user).toList();
            List<String> purchases = publishPurchases(blue);
            PurchaseBatch.Poison poison = new PurchaseBatch.Poison("{\"storeId\":0}".getBytes(StandardCharsets.UTF_8),
                    "storeId must be positive");
            try (Connection connection = blue.newConnection(); Channel channel = connection.createChannel()) {
                Parking.park(channel, poison, Topology.replicatedShardName(Topology.STORE_EXCHANGE, 0), Duration.ofSeconds(5));
            }
            Map<String, Long> onBlue = new LinkedHashMap<>();
            for (String queue : queues()) {
                onBlue.put(queue, blue.messageCount(queue));
            }
            assertThat(onBlue.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(2L * PURCHASES + 1);

            // 1. The definitions: exported from blue, imported into green.
            byte[] definitions = blue.management().send("GET", "api/definitions", null);
            TestBroker green = blue.on(greenNode);
            green.management().send("POST", "api/definitions", definitions);

            // 2. The new release's set-up over them: the same declarations, and the parking policy.
            declare(green, true);

            // 3. The messages: one shovel per queue, from blue's queue to green's of the same name.
            greenNode.enablePlugins("rabbitmq_shovel");
            for (String queue : queues()) {
                green.management().send("PUT", "api/parameters/shovel/" + green.vhost() + "/move-" + queue,
                        WireFormat.encode(Map.of("value", shovel(blueNode, green, queue))));
            }
            await("every message moved to green").atMost(PATIENCE).untilAsserted(() -> {
                for (String queue : queues()) {
                    assertThat(blue.messageCount(queue)).as("left on blue in %s", queue).isZero();
                    assertThat(green.messageCount(queue)).as("on green in %s", queue).isEqualTo(onBlue.get(queue));
                }
            });

            // Each purchase once behind each sharded exchange, in the shard queue it was in; the parked one intact.
            for (String exchange : Topology.SHARDED_EXCHANGES) {
                List<String> moved = new ArrayList<>();
                for (String shard : Topology.replicatedShards(exchange, SHARDS)) {
                    moved.addAll(drain(green, shard, onBlue.get(shard)));
                }
                assertThat(moved).as("behind %s", exchange).hasSize(PURCHASES).containsExactlyInAnyOrderElementsOf(purchases);
            }
            assertThat(drain(green, Topology.PARKING_QUEUE, 1)).containsExactly(new String(poison.json(), StandardCharsets.UTF_8));

            // The services' users: their passwords came with the definitions, and each finds what it works with.
            for (TestBroker user : users) {
                assertThat(setUp(user.on(greenNode), false)).as(user.username()).isTrue();
            }
        }
    }

    /** The platform's replicated topology in {@code broker}'s vhost, set up by its administrator; the parking policy or not. */
    private static void declare(TestBroker broker, boolean parkingPolicy) {
        assertThat(setUp(broker, parkingPolicy)).as("the set-up in %s", broker.vhost()).isTrue();
    }

    /**
     * Whether the set-up of the replicated mode succeeds as {@code broker}'s user: declaring (and
     * the parking policy if {@code managePolicies}) as the administrator, checking as a service.
     */
    private static boolean setUp(TestBroker broker, boolean managePolicies) {
        Duration interval = Duration.ofMillis(500);
        BrokerSettings settings = new BrokerSettings(broker.managementUri(), 1, managePolicies, interval, interval,
                BrokerSettings.TopologyMode.REPLICATED, SHARDS, broker.rights() == BrokerUsers.ADMINISTRATOR);
        CachingConnectionFactory connections = new CachingConnectionFactory(broker.connectionFactory());
        try {
            BrokerSetup setup = new BrokerSetup(new RabbitAdmin(connections), broker.management(), broker.vhost(), settings,
                    broker.rights());
            return setup.ensure();
        } finally {
            connections.destroy();
        }
    }

    /** Every queue of the replicated topology. */
    private static List<String> queues() {
        Duration interval = Duration.ofMillis(500);
        BrokerSettings settings = new BrokerSettings(URI.create("http://127.0.0.1:1"), 1, true, interval, interval,
                BrokerSettings.TopologyMode.REPLICATED, SHARDS, true);
        List<String> queues = new ArrayList<>();
        for (Declarable declarable : BrokerTopology.declarables(settings).getDeclarables()) {
            if (declarable instanceof Queue queue) {
                queues.add(queue.getName());
            }
        }
        return queues;
    }

    /** {@value #PURCHASES} persistent messages to the ingress, confirmed, a store each; their bodies. */
    private static List<String> publishPurchases(TestBroker broker) throws Exception {
        List<String> bodies = new ArrayList<>();
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int store = 1; store <= PURCHASES; store++) {
                String body = "purchase of store " + store;
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(store, SHARDS), true,
                        new AMQP.BasicProperties.Builder().deliveryMode(2).build(), body.getBytes(StandardCharsets.UTF_8));
                bodies.add(body);
            }
            channel.waitForConfirmsOrDie(10_000);
        }
        return bodies;
    }

    /** A dynamic shovel that moves what {@code queue} holds on blue now to green's queue of the same name, then ends. */
    private static Map<String, Object> shovel(TestNode blue, TestBroker green, String queue) {
        String vhost = green.vhost();
        return Map.of(
                "src-protocol", "amqp091",
                "src-uri", "amqp://" + green.username() + ":" + green.password() + "@" + blue.addressForContainers() + "/" + vhost,
                "src-queue", queue,
                "src-predeclared", true,
                "src-delete-after", "queue-length",
                "dest-protocol", "amqp091",
                "dest-uri", "amqp:///" + vhost,
                "dest-queue", queue,
                "dest-predeclared", true,
                "ack-mode", "on-confirm");
    }

    /** The {@code count} messages of {@code queue} (its single active consumer), taken off it. */
    private static List<String> drain(TestBroker broker, String queue, long count) throws Exception {
        List<String> bodies = new ArrayList<>();
        BlockingQueue<String> delivered = new LinkedBlockingQueue<>();
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.basicConsume(queue, true, (tag, delivery) -> delivered.add(new String(delivery.getBody(), StandardCharsets.UTF_8)),
                    tag -> { });
            while (bodies.size() < count) {
                String body = delivered.poll(10, TimeUnit.SECONDS);
                assertThat(body).as("message %d of %d in %s", bodies.size() + 1, count, queue).isNotNull();
                bodies.add(body);
            }
        }
        return bodies;
    }
}
