package com.supermarket.broker.testing;

import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerSetup;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.ManagementClient;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * A throw-away virtual host on the real RabbitMQ, so integration tests that run side by side
 * (or after each other) never see each other's queues, policies or messages.
 *
 * <p>The broker is the one {@link TestServices#rabbitMq()} gives (a container, or the local
 * one). If it cannot be had the test fails and says why: an integration test never skips.
 */
public final class TestBroker implements AutoCloseable {

    private final String host;
    private final int port;
    private final String username;
    private final String password;
    private final URI managementUri;
    private final ManagementClient management;
    private final String vhost;
    private final List<String> users = new ArrayList<>();
    private final boolean owner;
    private final BrokerUsers rights;

    private TestBroker(String purpose, String host, int port, String username, String password, URI managementUri) {
        this.host = host;
        this.port = port;
        this.username = username;
        this.password = password;
        this.managementUri = managementUri;
        management = new ManagementClient(managementUri, username, password);
        vhost = "it-" + purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
        management.send("PUT", "api/vhosts/" + vhost, null);
        management.send("PUT", "api/permissions/" + vhost + "/" + username,
                "{\"configure\":\".*\",\"write\":\".*\",\"read\":\".*\"}".getBytes(StandardCharsets.UTF_8));
        owner = true;
        rights = BrokerUsers.ADMINISTRATOR;
    }

    /** The same vhost and user on another node; closing it does nothing. */
    private TestBroker(TestBroker original, TestServices.Broker node) {
        this.host = node.host();
        this.port = node.port();
        this.username = original.username;
        this.password = original.password;
        this.managementUri = node.managementUri();
        this.management = new ManagementClient(managementUri, username, password);
        this.vhost = original.vhost;
        this.owner = false;
        this.rights = original.rights;
    }

    /**
     * This vhost and user on {@code node}, where something else made them (e.g. an import of this
     * node's definitions); closing it deletes nothing.
     */
    public TestBroker on(TestNode node) {
        return new TestBroker(this, node.service());
    }

    /** The same vhost, as another user; closing it does nothing (the owner deletes the user). */
    private TestBroker(TestBroker owner, String username, String password, BrokerUsers rights) {
        this.host = owner.host;
        this.port = owner.port;
        this.username = username;
        this.password = password;
        this.managementUri = owner.managementUri;
        this.management = new ManagementClient(managementUri, username, password);
        this.vhost = owner.vhost;
        this.owner = false;
        this.rights = rights;
    }

    /** Creates a fresh vhost named after {@code purpose} (letters, digits, dashes). */
    public static TestBroker create(String purpose) {
        return on(TestServices.rabbitMq(), purpose);
    }

    /** A fresh vhost on {@code broker}, e.g. a {@link TestNode}. */
    static TestBroker on(TestServices.Broker broker, String purpose) {
        return new TestBroker(purpose, broker.host(), broker.port(), broker.username(), broker.password(),
                broker.managementUri());
    }

    public URI managementUri() {
        return managementUri;
    }

    /**
     * Messages published now that reach {@code targetExchange} only when released (see
     * {@link HeldMessages}), named after {@code name}.
     */
    public HeldMessages held(String name, String targetExchange) {
        return new HeldMessages(this, name, targetExchange);
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public String username() {
        return username;
    }

    public String password() {
        return password;
    }

    public String vhost() {
        return vhost;
    }

    public ManagementClient management() {
        return management;
    }

    /** The rights this user holds: {@link BrokerUsers#ADMINISTRATOR} for the vhost's owner. */
    public BrokerUsers rights() {
        return rights;
    }

    /**
     * Creates a broker user (deleted by {@link #close()}) with the tags and permissions of
     * {@code rights} in this vhost only, named after it and this vhost, with a random password.
     */
    public TestBroker user(BrokerUsers rights) {
        if (!owner) {
            throw new IllegalStateException("only the vhost's owner creates users");
        }
        String name = vhost + "-" + rights.name();
        String password = UUID.randomUUID().toString();
        management.send("PUT", "api/users/" + name, WireFormat.encode(Map.of("password", password, "tags", rights.tags())));
        users.add(name);
        management.send("PUT", "api/permissions/" + vhost + "/" + name, WireFormat.encode(Map.of(
                "configure", rights.configure(), "write", rights.write(), "read", rights.read())));
        return new TestBroker(this, name, password, rights);
    }

    /** Spring Boot properties that point an application at this vhost and the broker's management API. */
    public Map<String, String> springProperties() {
        return Map.of(
                "spring.rabbitmq.host", host,
                "spring.rabbitmq.port", Integer.toString(port),
                "spring.rabbitmq.username", username,
                "spring.rabbitmq.password", password,
                "spring.rabbitmq.virtual-host", vhost,
                "platform.broker.management-url", managementUri.toString());
    }

    public ConnectionFactory connectionFactory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(vhost);
        return factory;
    }

    public Connection newConnection() {
        try {
            return connectionFactory().newConnection("test");
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException("cannot connect to RabbitMQ at " + host + ":" + port, e);
        }
    }

    /**
     * Declares the platform topology in this vhost and waits until the plugin has created all
     * shard queues of both sharded exchanges.
     */
    public void applyTopology(int shardsPerNode) {
        applyTopology(shardsPerNode, 1);
    }

    /**
     * {@link #applyTopology(int)} with store-service's stores in {@code storePartitions}
     * partitions: one query queue each ({@link Topology#storeQueryQueue}).
     */
    public void applyTopology(int shardsPerNode, int storePartitions) {
        Duration interval = Duration.ofSeconds(1);
        apply(new BrokerSettings(managementUri, shardsPerNode, true, interval, interval, null, 0, null, storePartitions));
    }

    /**
     * Declares the platform topology in this vhost in the {@code replicated} mode: {@code shards}
     * quorum queues per sharded exchange ({@link Topology#replicatedShards}).
     */
    public void applyReplicatedTopology(int shards) {
        Duration interval = Duration.ofSeconds(1);
        apply(new BrokerSettings(managementUri, 1, true, interval, interval, BrokerSettings.TopologyMode.REPLICATED,
                shards, null));
    }

    /**
     * Declares the topology of {@code settings} in this vhost and applies its policies; in the
     * {@code sharded} mode, waits until the plugin has created the shard queues of every sharded
     * exchange.
     */
    public void apply(BrokerSettings settings) {
        prepare(settings);
        if (settings.topologyMode() == BrokerSettings.TopologyMode.SHARDED) {
            for (String exchange : settings.shardedExchanges()) {
                await("shard queues of " + exchange).atMost(Duration.ofSeconds(30))
                        .until(() -> shardQueues(exchange).size() >= settings.shardsPerNode());
            }
        }
    }

    private void prepare(BrokerSettings settings) {
        CachingConnectionFactory connections = new CachingConnectionFactory(connectionFactory());
        try {
            BrokerSetup setup = new BrokerSetup(new RabbitAdmin(connections), management, vhost, settings, rights);
            if (!setup.ensure()) {
                throw new IllegalStateException(setup.problem());
            }
        } finally {
            connections.destroy();
        }
    }

    /**
     * The shared broker settings for this broker: the policies applied by the services, shard
     * discovery and retries every {@code interval}.
     */
    public BrokerSettings settings(int shardsPerNode, Duration interval) {
        return new BrokerSettings(managementUri, shardsPerNode, true, interval, interval, null, 0, null);
    }

    public List<String> shardQueues(String exchange) {
        return BrokerTopology.shardQueues(management, vhost, exchange);
    }

    /** The number of consumers of {@code queue}, read over AMQP (exact, not sampled). */
    public long consumerCount(String queue) {
        try (Connection connection = newConnection(); Channel channel = connection.createChannel()) {
            return channel.queueDeclarePassive(queue).getConsumerCount();
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The number of ready messages in {@code queue}, read over AMQP (exact, not sampled). */
    public long messageCount(String queue) {
        try (Connection connection = newConnection(); Channel channel = connection.createChannel()) {
            return channel.queueDeclarePassive(queue).getMessageCount();
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every purchase in the batches ready in the shard queues of {@code exchange}, read over AMQP;
     * the messages stay in place (closing the channel requeues what it got).
     */
    public List<Purchase> purchasesBehind(String exchange) {
        List<Purchase> purchases = new ArrayList<>();
        try (Connection connection = newConnection(); Channel channel = connection.createChannel()) {
            for (String shard : shardQueues(exchange)) {
                for (GetResponse get = channel.basicGet(shard, false); get != null; get = channel.basicGet(shard, false)) {
                    purchases.addAll(PurchaseBatch.decode(get.getProps().getType(), get.getBody()).purchases());
                }
            }
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException(e);
        }
        return purchases;
    }

    /**
     * Takes every ready message out of {@code queue}, acknowledged, as its consumer would, and
     * returns the purchases of their batches in the order they came.
     */
    public List<Purchase> take(String queue) {
        List<Purchase> purchases = new ArrayList<>();
        try (Connection connection = newConnection(); Channel channel = connection.createChannel()) {
            for (GetResponse get = channel.basicGet(queue, true); get != null; get = channel.basicGet(queue, true)) {
                purchases.addAll(PurchaseBatch.decode(get.getProps().getType(), get.getBody()).purchases());
            }
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException(e);
        }
        return purchases;
    }

    /** The ready messages summed over every shard queue of {@code exchange}. */
    public long messageCountBehind(String exchange) {
        return shardQueues(exchange).stream().mapToLong(this::messageCount).sum();
    }

    @Override
    public void close() {
        if (!owner) {
            return;
        }
        try {
            management.send("DELETE", "api/vhosts/" + vhost, null);
        } finally {
            for (String user : users) {
                management.send("DELETE", "api/users/" + user, null);
            }
        }
    }
}
