package com.supermarket.broker.testing;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerSetup;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.ManagementClient;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import tools.jackson.databind.JsonNode;

/**
 * A real three-node RabbitMQ cluster with a throw-away vhost, for the tests where a node dies:
 * started by {@link #start}, stopped and its data deleted by {@link #close}. In
 * {@link TestServices.Mode#CONTAINERS} three containers on a user network of their own (nodes
 * sm1..sm3, AMQP and management published on free ports that survive a node's restart), a node
 * loss being {@code docker kill}; on local services the cluster of
 * {@code scripts/rabbitmq-cluster.sh} (nodes sm1..sm3@localhost, AMQP 5681..5683, management
 * 15681..15683), a node loss being a SIGKILL, which needs root and the rabbitmq-server package:
 * without them {@link #start} fails and says so (never a skip). Not thread-safe; one per test class.
 */
public final class TestCluster implements AutoCloseable {

    /** The cluster's nodes, numbered as the script numbers them. */
    public static final List<Integer> NODES = List.of(1, 2, 3);

    private static final String USER = "guest";

    private final Nodes nodes;
    private final String vhost;

    private TestCluster(Nodes nodes, String purpose) {
        this.nodes = nodes;
        this.vhost = "it-" + purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Starts the cluster (if not running) and creates a fresh vhost named after {@code purpose}. */
    public static TestCluster start(String purpose) {
        TestCluster cluster = new TestCluster(TestServices.mode() == TestServices.Mode.CONTAINERS
                ? new ClusterContainers(purpose) : new ScriptNodes(), purpose);
        try {
            cluster.nodes.start();
            ManagementClient management = cluster.management(1);
            management.send("PUT", "api/vhosts/" + cluster.vhost, null);
            management.send("PUT", "api/permissions/" + cluster.vhost + "/" + USER,
                    "{\"configure\":\".*\",\"write\":\".*\",\"read\":\".*\"}".getBytes(StandardCharsets.UTF_8));
            return cluster;
        } catch (RuntimeException e) {
            // A half-started cluster is stopped here: the caller never gets it to close.
            cluster.close();
            throw e;
        }
    }

    public String vhost() {
        return vhost;
    }

    /** {@code host:port} of node {@code n}'s AMQP listener. */
    public String address(int node) {
        return "127.0.0.1:" + nodes.amqpPort(node);
    }

    /** Every node's AMQP address, comma separated, {@code first} first (the node a client tries first). */
    public String addresses(int first) {
        List<String> addresses = new ArrayList<>();
        addresses.add(address(first));
        NODES.stream().filter(n -> n != first).forEach(n -> addresses.add(address(n)));
        return String.join(",", addresses);
    }

    /** A Spring connection factory to this vhost over every node, {@code first} tried first. */
    public CachingConnectionFactory connectionFactory(int first) {
        CachingConnectionFactory factory = new CachingConnectionFactory();
        factory.setAddresses(addresses(first));
        factory.setUsername(USER);
        factory.setPassword(USER);
        factory.setVirtualHost(vhost);
        factory.setConnectionTimeout(2_000);
        // In order, so that the test knows which node a client is on (the default is random).
        factory.setAddressShuffleMode(AbstractConnectionFactory.AddressShuffleMode.NONE);
        return factory;
    }

    /** Spring Boot properties that point a service at this vhost over every node, {@code first} first. */
    public Map<String, String> springProperties(int first) {
        return Map.of(
                "spring.rabbitmq.addresses", addresses(first),
                "spring.rabbitmq.address-shuffle-mode", "none",
                "spring.rabbitmq.username", USER,
                "spring.rabbitmq.password", USER,
                "spring.rabbitmq.virtual-host", vhost,
                "platform.broker.management-url", managementUri(first).toString(),
                "platform.broker.topology-mode", "replicated");
    }

    public URI managementUri(int node) {
        return URI.create("http://127.0.0.1:" + nodes.managementPort(node));
    }

    public ManagementClient management(int node) {
        return new ManagementClient(managementUri(node), USER, USER);
    }

    /**
     * Declares the platform's {@code replicated} topology ({@code shards} quorum queues per
     * sharded exchange) in this vhost through node 1, so that its leaders are placed.
     */
    public void declareReplicatedTopology(int shards) {
        CachingConnectionFactory connections = connectionFactory(1);
        try {
            BrokerSetup setup = replicatedSettings(shards).setup(new RabbitAdmin(connections), USER, USER, vhost, BrokerUsers.ADMINISTRATOR);
            if (!setup.ensure()) {
                throw new IllegalStateException(setup.problem());
            }
        } finally {
            connections.destroy();
        }
    }

    /** Settings of the {@code replicated} mode with {@code shards} queues, retries every 500 ms. */
    public BrokerSettings replicatedSettings(int shards) {
        Duration interval = Duration.ofMillis(500);
        return new BrokerSettings(managementUri(1), 1, true, interval, interval, BrokerSettings.TopologyMode.REPLICATED,
                shards, null);
    }

    /** A plain AMQP connection to this vhost on node {@code node} only. */
    public Connection newConnection(int node) {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setUsername(USER);
        factory.setPassword(USER);
        factory.setVirtualHost(vhost);
        try {
            return factory.newConnection(List.of(Address.parseAddress(address(node))), "test");
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException("cannot connect to the cluster", e);
        }
    }

    /** How many of this vhost's quorum queues each node leads, asked of a running node. */
    public Map<String, Integer> leadersByNode(int askedNode) {
        JsonNode queues = WireFormat.mapper().readTree(management(askedNode).send("GET",
                "api/queues/" + URLEncoder.encode(vhost, StandardCharsets.UTF_8) + "?columns=name,type,leader,node", null));
        Map<String, Integer> leaders = new HashMap<>();
        for (JsonNode queue : queues) {
            if ("quorum".equals(queue.path("type").asString())) {
                String leader = queue.path("leader").asString(queue.path("node").asString());
                leaders.merge(leader, 1, Integer::sum);
            }
        }
        return leaders;
    }

    /** The node (1..3) leading most of this vhost's quorum queues. */
    public int nodeLeadingMostQueues() {
        Map<String, Integer> leaders = leadersByNode(1);
        String most = leaders.entrySet().stream().max(Map.Entry.comparingByValue())
                .orElseThrow(() -> new IllegalStateException("no quorum queue in " + vhost)).getKey();
        return Integer.parseInt(most.substring(2, most.indexOf('@')));
    }

    /** Kills node {@code n} abruptly (SIGKILL), as a lost machine. */
    public void stopNode(int n) {
        nodes.kill(n);
    }

    /** Starts node {@code n} again; it rejoins with its data. */
    public void startNode(int n) {
        nodes.restart(n);
    }

    /** Stops every node and deletes the cluster's data (the vhost with it). */
    @Override
    public void close() {
        nodes.close();
    }

    /** Where the three nodes run and how a test hits them. */
    interface Nodes extends AutoCloseable {

        /** Starts the three nodes, joined as one cluster, and waits until they are up. */
        void start();

        int amqpPort(int node);

        int managementPort(int node);

        void kill(int node);

        /** Starts a killed node again and waits until it is up. */
        void restart(int node);

        /** Stops the nodes and deletes their data. */
        @Override
        void close();
    }

    /** The local cluster of {@code scripts/rabbitmq-cluster.sh}, on its fixed ports. */
    private static final class ScriptNodes implements Nodes {

        private final Path script = Scripts.find("rabbitmq-cluster.sh");

        @Override
        public void start() {
            run("start");
        }

        @Override
        public int amqpPort(int node) {
            return 5680 + node;
        }

        @Override
        public int managementPort(int node) {
            return 15680 + node;
        }

        @Override
        public void kill(int node) {
            run("stop-node", Integer.toString(node));
        }

        @Override
        public void restart(int node) {
            run("start-node", Integer.toString(node));
        }

        @Override
        public void close() {
            run("stop");
        }

        private void run(String... arguments) {
            // The machine's own rabbitmq-server as processes: the local services' broker.
            List<String> command = new ArrayList<>(List.of("env", "CLUSTER_RUNTIME=processes"));
            command.add(script.toString());
            command.addAll(List.of(arguments));
            Scripts.run(command, Duration.ofMinutes(3), "root and the rabbitmq-server package; scripts/local-services.sh installs it");
        }
    }
}
