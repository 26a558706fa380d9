package com.supermarket.broker.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * A single RabbitMQ node of one test's own, with the sharding, management and Prometheus plugins: for the
 * faults that hit a whole node, such as a memory alarm, which on the shared broker would block
 * every other test. In {@link TestServices.Mode#CONTAINERS} a container of its own; on local
 * services a node of {@code scripts/rabbitmq-node.sh} on free ports, which needs root and the
 * rabbitmq-server package (without them {@link #start} fails and says so, never a skip).
 * {@link #start} takes some seconds (an Erlang VM and its plugins boot); {@link #close} stops the
 * node and deletes its data. {@link #startOlder} starts a node of the older RabbitMQ an upgrade
 * moves from (containers only). Not thread-safe; one per test class.
 */
public final class TestNode implements AutoCloseable {

    private static final String NEEDS = "root and the rabbitmq-server package; scripts/local-services.sh installs it";

    private final String name;
    private final TestServices.Broker broker;
    private final URI prometheusUri;
    private final Function<List<String>, String> rabbitmqctl;
    private final Runnable stop;
    /** The node's container; null on local services. */
    private final RabbitMQContainer container;

    private TestNode(String name, TestServices.Broker broker, URI prometheusUri, Function<List<String>, String> rabbitmqctl,
                     Runnable stop, RabbitMQContainer container) {
        this.name = name;
        this.broker = broker;
        this.prometheusUri = prometheusUri;
        this.rabbitmqctl = rabbitmqctl;
        this.stop = stop;
        this.container = container;
    }

    /** Starts a node named after {@code purpose} (letters, digits, dashes) and waits until it is up. */
    public static TestNode start(String purpose) {
        String name = purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
        if (TestServices.mode() == TestServices.Mode.CONTAINERS) {
            return inContainer(name, ServiceContainers.start(ServiceContainers.rabbitMq(), "rabbitmq-" + purpose));
        }
        int[] ports = freePorts(4);
        String node = name + "@localhost";
        TestNode started = new TestNode(name, new TestServices.Broker("127.0.0.1", ports[0],
                URI.create("http://127.0.0.1:" + ports[1]), "guest", "guest"), URI.create("http://127.0.0.1:" + ports[3]),
                arguments -> Scripts.run(rabbitmqctlOn(node, arguments), Duration.ofSeconds(30), NEEDS),
                () -> script("stop", name), null);
        try {
            script("start", name, Integer.toString(ports[0]), Integer.toString(ports[1]), Integer.toString(ports[2]),
                    Integer.toString(ports[3]));
            return started;
        } catch (RuntimeException e) {
            // A half-started node is stopped here: the caller never gets it to close.
            started.close();
            throw e;
        }
    }

    /**
     * Starts a node of the older RabbitMQ an upgrade moves from ({@code RABBITMQ_UPGRADE_SOURCE_IMAGE},
     * default the official image the chart's first release ran; {@code scripts/images.sh} builds a
     * local one), with the same plugins, and waits until it is up. Containers only: the machine's
     * own broker is the only one on local services.
     */
    public static TestNode startOlder(String purpose) {
        TestServices.requireContainers("a node of the older RabbitMQ");
        return inContainer(purpose + "-" + UUID.randomUUID().toString().substring(0, 8),
                ServiceContainers.start(ServiceContainers.olderRabbitMq(), "rabbitmq-" + purpose));
    }

    private static TestNode inContainer(String name, RabbitMQContainer container) {
        return new TestNode(name, TestServices.broker(container), URI.create("http://" + container.getHost() + ":"
                + container.getMappedPort(ServiceContainers.RABBITMQ_PROMETHEUS_PORT)),
                arguments -> ServiceContainers.rabbitmqctl(container, arguments.toArray(String[]::new)),
                () -> ServiceContainers.stop(container), container);
    }

    /** This node's RabbitMQ version, e.g. {@code 4.3.6}. */
    public String version() {
        return rabbitmqctl("eval", "rabbit_misc:version().").strip().replace("\"", "");
    }

    /**
     * The AMQP address {@code host:port} at which another container reaches this node (its
     * address on Docker's bridge network). Containers only.
     */
    public String addressForContainers() {
        TestServices.requireContainers("a node's address for other containers");
        return container.getContainerInfo().getNetworkSettings().getIpAddress() + ":5672";
    }

    /** Enables {@code plugins} on the running node. Containers only. */
    public void enablePlugins(String... plugins) {
        TestServices.requireContainers("enabling plugins on a node");
        String[] command = new String[plugins.length + 3];
        command[0] = "rabbitmq-plugins";
        command[1] = "-q";
        command[2] = "enable";
        System.arraycopy(plugins, 0, command, 3, plugins.length);
        ServiceContainers.exec(container, command);
    }

    TestServices.Broker service() {
        return broker;
    }

    /** A fresh vhost on this node, named after {@code purpose}. */
    public TestBroker broker(String purpose) {
        return TestBroker.on(broker, purpose);
    }

    public URI managementUri() {
        return broker.managementUri();
    }

    /** The Prometheus plugin's endpoint ({@code /metrics}, {@code /metrics/detailed}). */
    public URI prometheusUri() {
        return prometheusUri;
    }

    /**
     * Raises a memory alarm on this node (a high watermark of a few bytes) and waits until it is
     * in force: from then on the broker stops reading from every connection that publishes.
     */
    public void raiseMemoryAlarm() {
        rabbitmqctl("set_vm_memory_high_watermark", "0.0000001");
        await("a memory alarm on " + name).atMost(Duration.ofSeconds(30)).until(this::hasMemoryAlarm);
    }

    /** Restores the default high watermark and waits until the alarm is cleared. */
    public void clearMemoryAlarm() {
        rabbitmqctl("set_vm_memory_high_watermark", "0.4");
        await("the memory alarm on " + name + " cleared").atMost(Duration.ofSeconds(30)).until(() -> !hasMemoryAlarm());
    }

    private boolean hasMemoryAlarm() {
        return rabbitmqctl("eval", "rabbit_alarm:get_alarms().").contains("memory");
    }

    /**
     * The messages in {@code queue} of {@code vhost}, ready and unacknowledged, as the queue
     * counts them now: 0 means the queue is drained and every delivery acknowledged.
     */
    public long messagesReadyOrUnacknowledged(String vhost, String queue) {
        Long messages = TestServices.queueCounts(rabbitmqctl("list_queues", "-p", vhost, "name", "messages", "--no-table-headers"))
                .get(queue);
        if (messages == null) {
            throw new IllegalStateException("no queue '" + queue + "' in vhost '" + vhost + "' on " + name);
        }
        return messages;
    }

    /** The state of each client connection to {@code vhost} ({@code running}, {@code blocking}, {@code blocked}...). */
    public List<String> connectionStates(String vhost) {
        List<String> states = new ArrayList<>();
        for (String line : rabbitmqctl("list_connections", "vhost", "state", "--no-table-headers").split("\n")) {
            String[] columns = line.split("\t");
            if (columns.length == 2 && columns[0].equals(vhost)) {
                states.add(columns[1].strip());
            }
        }
        return states;
    }

    /** Stops the node and deletes its data. */
    @Override
    public void close() {
        stop.run();
    }

    private String rabbitmqctl(String... arguments) {
        return rabbitmqctl.apply(List.of(arguments));
    }

    private static List<String> rabbitmqctlOn(String node, List<String> arguments) {
        List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q", "-n", node));
        command.addAll(arguments);
        return command;
    }

    private static void script(String... arguments) {
        List<String> command = new ArrayList<>(List.of(Scripts.find("rabbitmq-node.sh").toString()));
        command.addAll(List.of(arguments));
        Scripts.run(command, Duration.ofMinutes(3), NEEDS);
    }

    /** Ports free now, held open together so that they differ. */
    private static int[] freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0);
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new IllegalStateException("no free port", e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // the port is free again either way
                }
            }
        }
    }
}
