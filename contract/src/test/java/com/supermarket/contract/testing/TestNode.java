package com.supermarket.contract.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A single RabbitMQ node of one test's own ({@code scripts/rabbitmq-node.sh}), on free ports, with
 * the sharding and management plugins: for the faults that hit a whole node, such as a memory
 * alarm, which on the machine's shared broker would block every other test. {@link #start} takes
 * some seconds (an Erlang VM and its plugins boot); {@link #close} stops the node and deletes its
 * data. Needs root and the rabbitmq-server package: without them {@link #start} fails and says so
 * (never a skip). Not thread-safe; one per test class.
 */
public final class TestNode implements AutoCloseable {

    private static final String NEEDS = "root and the rabbitmq-server package; scripts/local-services.sh installs it";

    private final String name;
    private final int amqpPort;
    private final int managementPort;

    private TestNode(String name, int amqpPort, int managementPort) {
        this.name = name;
        this.amqpPort = amqpPort;
        this.managementPort = managementPort;
    }

    /** Starts a node named after {@code purpose} (letters, digits, dashes) and waits until it is up. */
    public static TestNode start(String purpose) {
        int[] ports = freePorts(3);
        TestNode node = new TestNode(purpose + "-" + UUID.randomUUID().toString().substring(0, 8), ports[0], ports[1]);
        try {
            node.script("start", Integer.toString(ports[0]), Integer.toString(ports[1]), Integer.toString(ports[2]));
            return node;
        } catch (RuntimeException e) {
            // A half-started node is stopped here: the caller never gets it to close.
            node.close();
            throw e;
        }
    }

    /** A fresh vhost on this node, named after {@code purpose}. */
    public TestBroker broker(String purpose) {
        return TestBroker.on("127.0.0.1", amqpPort, managementUri(), purpose);
    }

    public URI managementUri() {
        return URI.create("http://127.0.0.1:" + managementPort);
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

    /** Stops the node and deletes its data. */
    @Override
    public void close() {
        script("stop");
    }

    private String nodeName() {
        return name + "@localhost";
    }

    private String rabbitmqctl(String... arguments) {
        List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q", "-n", nodeName()));
        command.addAll(List.of(arguments));
        return Scripts.run(command, Duration.ofSeconds(30), NEEDS);
    }

    private void script(String... arguments) {
        List<String> command = new ArrayList<>(List.of(Scripts.find("rabbitmq-node.sh").toString(), arguments[0], name));
        command.addAll(List.of(arguments).subList(1, arguments.length));
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
