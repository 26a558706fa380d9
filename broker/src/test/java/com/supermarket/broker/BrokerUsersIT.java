package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.BrokerSettings.TopologyMode;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * Each service's {@link BrokerUsers} rights on the real broker, in a throw-away vhost with
 * throw-away users: the topology is declared once by the administrator (as the deployment's
 * set-up step does), each service's user then does its job through the same classes and AMQP
 * operations the service uses ({@link BrokerSetup} with {@code declare=false}, {@link ShardConsumers},
 * {@link Parking}, a confirmed mandatory publish to the ingress, direct reply-to RPC, the
 * management API's queue listing), and is refused everything else.
 */
class BrokerUsersIT {

    private static final Duration INTERVAL = Duration.ofMillis(300);

    private TestBroker admin;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (AutoCloseable resource : resources.reversed()) {
            resource.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    @ParameterizedTest
    @EnumSource(TopologyMode.class)
    void eachServiceUserDoesItsJobWithoutDeclaringAnything(TopologyMode mode) throws Exception {
        admin = TestBroker.create("users-" + mode.name().toLowerCase());
        declareAsAdministrator(mode);
        TestBroker api = admin.user(BrokerUsers.PURCHASE_API);
        TestBroker store = admin.user(BrokerUsers.STORE_SERVICE);
        TestBroker purchases = admin.user(BrokerUsers.PURCHASES_SERVICE);

        // store-service: its shards, a poison purchase parked, and the RPC server.
        Queue<String> counted = new ConcurrentLinkedQueue<>();
        ShardConsumers storeConsumers = consumers(store, mode, Topology.STORE_EXCHANGE, (message, channel) -> {
            counted.add(body(message));
            channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
        });
        rpcServer(store);
        // purchases-service: its shards; every purchase of store 13 is parked as poison.
        Queue<String> stored = new ConcurrentLinkedQueue<>();
        ShardConsumers purchaseConsumers = consumers(purchases, mode, Topology.PURCHASE_EXCHANGE, (message, channel) -> {
            if (body(message).equals("store 13")) {
                Parking.park(channel, new PurchaseBatch.Poison("store 13".getBytes(StandardCharsets.UTF_8), "test poison"),
                        message.getMessageProperties().getConsumerQueue(), Duration.ofSeconds(5));
            } else {
                stored.add(body(message));
            }
            channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
        });
        await("both consumers").atMost(Duration.ofSeconds(30))
                .until(() -> storeConsumers.isConsuming() && purchaseConsumers.isConsuming());

        // purchase-api: the readiness checks (passive declare, shard listing), confirmed publishes, a query.
        assertThat(setup(api, mode).ensure()).isTrue();
        if (mode == TopologyMode.SHARDED) {
            for (String exchange : Topology.SHARDED_EXCHANGES) {
                assertThat(BrokerTopology.shardQueues(api.management(), api.vhost(), exchange)).isNotEmpty();
            }
        }
        CachingConnectionFactory apiConnections = connections(api);
        apiConnections.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        apiConnections.setPublisherReturns(true);
        RabbitTemplate publisher = new RabbitTemplate(apiConnections);
        publisher.setMandatory(true);
        for (int storeId = 1; storeId <= 20; storeId++) {
            CorrelationData confirm = new CorrelationData();
            publisher.send(Topology.INGRESS_EXCHANGE, Topology.routingKey(storeId, 64),
                    new Message(("store " + storeId).getBytes(StandardCharsets.UTF_8)), confirm);
            assertThat(confirm.getFuture().get(5, TimeUnit.SECONDS).ack()).as("confirm of store %d", storeId).isTrue();
            assertThat(confirm.getReturned()).as("returned store %d", storeId).isNull();
        }
        await("every purchase counted and stored or parked").atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(counted).hasSize(20);
            assertThat(stored).hasSize(19).doesNotContain("store 13");
            assertThat(admin.messageCount(Topology.PARKING_QUEUE)).isEqualTo(1);
        });

        RabbitTemplate queries = new RabbitTemplate(connections(api));
        queries.setReplyTimeout(5_000);
        Message reply = queries.sendAndReceive("", Topology.STORE_RPC_QUEUE,
                new Message("top10 7".getBytes(StandardCharsets.UTF_8), new MessageProperties()));
        assertThat(reply).isNotNull();
        assertThat(body(reply)).isEqualTo("answer to top10 7");
    }

    @Test
    void eachServiceUserIsRefusedWhatIsNotItsJob() throws Exception {
        admin = TestBroker.create("users-refused");
        declareAsAdministrator(TopologyMode.SHARDED);
        TestBroker api = admin.user(BrokerUsers.PURCHASE_API);
        TestBroker store = admin.user(BrokerUsers.STORE_SERVICE);
        TestBroker purchases = admin.user(BrokerUsers.PURCHASES_SERVICE);
        String purchaseShard = admin.shardQueues(Topology.PURCHASE_EXCHANGE).getFirst();
        String storeShard = admin.shardQueues(Topology.STORE_EXCHANGE).getFirst();

        // Fake purchases: only purchase-api publishes to the ingress or the sharded exchanges.
        for (TestBroker user : List.of(store, purchases)) {
            for (String exchange : List.of(Topology.INGRESS_EXCHANGE, Topology.PURCHASE_EXCHANGE, Topology.STORE_EXCHANGE)) {
                assertPublishRefused(user, exchange, "1");
            }
        }
        assertPublishRefused(api, Topology.PURCHASE_EXCHANGE, "1");
        assertPublishRefused(api, Topology.STORE_EXCHANGE, "1");
        assertPublishRefused(api, Topology.DEAD_LETTER_EXCHANGE, "");
        // purchases-service cannot reach a queue through the default exchange (no direct reply-to there).
        assertPublishRefused(purchases, "", storeShard);

        // Reading what is not its own: the other service's shards, the RPC traffic, the parking queue.
        for (String queue : List.of(purchaseShard, storeShard, Topology.STORE_RPC_QUEUE, Topology.PARKING_QUEUE)) {
            assertConsumeRefused(api, queue);
        }
        for (String queue : List.of(purchaseShard, Topology.PARKING_QUEUE)) {
            assertConsumeRefused(store, queue);
        }
        for (String queue : List.of(storeShard, Topology.STORE_RPC_QUEUE, Topology.PARKING_QUEUE)) {
            assertConsumeRefused(purchases, queue);
        }

        // Changing the topology: no declare, delete, purge or policy by any service.
        for (TestBroker user : List.of(api, store, purchases)) {
            assertRefused(user, channel -> channel.queueDelete(Topology.STORE_RPC_QUEUE));
            assertRefused(user, channel -> channel.queueDelete(storeShard));
            // RabbitMQ counts a purge as a read: a service may purge its own shards, no other queue.
            String notItsOwn = user == purchases ? storeShard : purchaseShard;
            assertRefused(user, channel -> channel.queuePurge(notItsOwn));
            assertRefused(user, channel -> channel.exchangeDelete(Topology.INGRESS_EXCHANGE));
            assertRefused(user, channel -> channel.exchangeDeclare(Topology.INGRESS_EXCHANGE, "fanout", true));
            assertRefused(user, channel -> channel.queueDeclare("extra", true, false, false, null));
            assertRefused(user, channel -> channel.queueBind(purchaseShard, Topology.DEAD_LETTER_EXCHANGE, ""));
            assertThatThrownBy(() -> BrokerTopology.applyPolicies(user.management(), user.vhost(),
                    user.settings(1, Duration.ofSeconds(1))))
                    .as("%s sets a policy", user.username())
                    .isInstanceOf(ManagementClient.ManagementApiException.class).hasMessageContaining("401");
        }
        assertThat(admin.shardQueues(Topology.STORE_EXCHANGE)).contains(storeShard);
    }

    @Test
    void onlyStoreServiceReadsTheShardQueuesOfAFurtherCopyGroup() throws Exception {
        admin = TestBroker.create("users-copies");
        List<String> copyShards = List.of(Topology.replicatedShardName("storeX.c1", 0),
                Topology.shardQueuePrefix("storeX.c2") + "rabbit@node - 0");
        try (Connection connection = admin.newConnection()) {
            Channel channel = connection.createChannel();
            for (String queue : copyShards) {
                channel.queueDeclare(queue, true, false, false, null);
                channel.basicPublish("", queue, null, "a purchase".getBytes(StandardCharsets.UTF_8));
            }
        }
        TestBroker store = admin.user(BrokerUsers.STORE_SERVICE);

        try (Connection connection = store.newConnection()) {
            Channel channel = connection.createChannel();
            for (String queue : copyShards) {
                assertThat(channel.basicGet(queue, true)).as(queue).isNotNull();
            }
        }
        for (TestBroker other : List.of(admin.user(BrokerUsers.PURCHASE_API), admin.user(BrokerUsers.PURCHASES_SERVICE))) {
            for (String queue : copyShards) {
                assertConsumeRefused(other, queue);
            }
        }
    }

    private void declareAsAdministrator(TopologyMode mode) {
        if (mode == TopologyMode.SHARDED) {
            admin.applyTopology(1);
            return;
        }
        CachingConnectionFactory connections = new CachingConnectionFactory(admin.connectionFactory());
        try {
            assertThat(new BrokerSetup(new RabbitAdmin(connections), admin.management(), admin.vhost(),
                    settings(admin, mode, true), admin.rights()).ensure()).isTrue();
        } finally {
            connections.destroy();
        }
    }

    private static BrokerSettings settings(TestBroker broker, TopologyMode mode, boolean declare) {
        BrokerSettings base = broker.settings(1, INTERVAL);
        return new BrokerSettings(base.managementUrl(), 1, true, INTERVAL, INTERVAL, mode, 2, declare);
    }

    /** As a service builds it: over its own user, not declaring. */
    private BrokerSetup setup(TestBroker user, TopologyMode mode) {
        return new BrokerSetup(new RabbitAdmin(connections(user)), user.management(), user.vhost(), settings(user, mode, false),
                user.rights());
    }

    private ShardConsumers consumers(TestBroker user, TopologyMode mode, String exchange, ChannelAwareMessageListener listener) {
        BrokerSetup setup = setup(user, mode);
        ShardConsumers consumers = new ShardConsumers(exchange, connections(user), setup,
                setup.settings().consumers(1, 10), listener);
        consumers.start();
        resources.add(consumers::stop);
        return consumers;
    }

    /** Answers on the RPC queue as store-service's listener container does: reply to reply-to through the default exchange. */
    private void rpcServer(TestBroker store) {
        DirectMessageListenerContainer container = new DirectMessageListenerContainer(connections(store));
        container.setQueueNames(Topology.STORE_RPC_QUEUE);
        container.setMessageListener((ChannelAwareMessageListener) (request, channel) -> {
            MessageProperties properties = request.getMessageProperties();
            channel.basicPublish("", properties.getReplyTo(), new AMQP.BasicProperties.Builder()
                    .correlationId(properties.getCorrelationId()).build(),
                    ("answer to " + body(request)).getBytes(StandardCharsets.UTF_8));
        });
        container.afterPropertiesSet();
        container.start();
        resources.add(container::stop);
    }

    private CachingConnectionFactory connections(TestBroker user) {
        CachingConnectionFactory connections = new CachingConnectionFactory(user.connectionFactory());
        resources.add(connections::destroy);
        return connections;
    }

    private static void assertPublishRefused(TestBroker user, String exchange, String routingKey) {
        assertRefused(user, channel -> {
            channel.confirmSelect();
            channel.basicPublish(exchange, routingKey, null, "fake".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(5_000);
        });
    }

    private static void assertConsumeRefused(TestBroker user, String queue) {
        assertRefused(user, channel -> channel.basicConsume(queue, false, (tag, delivery) -> { }, tag -> { }));
        assertRefused(user, channel -> channel.basicGet(queue, false));
    }

    /** The operation closes the channel with ACCESS_REFUSED (403). */
    private static void assertRefused(TestBroker user, ChannelOperation operation) {
        try (Connection connection = user.newConnection()) {
            Channel channel = connection.createChannel();
            assertThatThrownBy(() -> operation.run(channel)).as("%s in %s", user.username(), user.vhost())
                    .satisfies(refusal -> assertThat(causes(refusal)).contains("ACCESS_REFUSED"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String causes(Throwable e) {
        StringBuilder messages = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            messages.append(t).append(' ');
        }
        return messages.toString();
    }

    private static String body(Message message) {
        return new String(message.getBody(), StandardCharsets.UTF_8);
    }

    @FunctionalInterface
    private interface ChannelOperation {
        void run(Channel channel) throws Exception;
    }
}
