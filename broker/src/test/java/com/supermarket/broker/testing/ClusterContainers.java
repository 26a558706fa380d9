package com.supermarket.broker.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Network;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * The three nodes of a {@link TestCluster} as containers on a user network of their own: node N
 * is {@code smN@nodeN} (its network alias and host name), all share one Erlang cookie, and nodes 2
 * and 3 join node 1. Each node's AMQP and management ports are published on free host ports fixed
 * at creation, so that a node started again after {@code docker kill} answers where the clients
 * expect it. Not thread-safe.
 */
final class ClusterContainers implements TestCluster.Nodes {

    private final String purpose;
    private final String cookie = UUID.randomUUID().toString().replace("-", "");
    private final List<RabbitMQContainer> containers = new ArrayList<>();
    private final int[] amqpPorts = new int[TestCluster.NODES.size()];
    private final int[] managementPorts = new int[TestCluster.NODES.size()];
    private Network network;

    ClusterContainers(String purpose) {
        this.purpose = purpose;
    }

    @Override
    public void start() {
        ServiceContainers.requireDocker();
        network = ServiceContainers.network();
        for (int node : TestCluster.NODES) {
            amqpPorts[node - 1] = freePort();
            managementPorts[node - 1] = freePort();
            String host = "node" + node;
            RabbitMQContainer container = ServiceContainers.rabbitMq().withNetwork(network).withNetworkAliases(host)
                    .withEnv("RABBITMQ_NODENAME", nodeName(node)).withEnv("RABBITMQ_ERLANG_COOKIE", cookie)
                    .withCreateContainerCmdModifier(cmd -> cmd.withHostName(host));
            container.setPortBindings(List.of(amqpPorts[node - 1] + ":5672", managementPorts[node - 1] + ":15672"));
            containers.add(container);
        }
        // The nodes boot side by side (each takes some seconds), then 2 and 3 join 1.
        CompletableFuture.allOf(TestCluster.NODES.stream().map(node -> CompletableFuture.runAsync(() ->
                ServiceContainers.start(container(node), "rabbitmq-" + purpose + "-sm" + node))).toArray(CompletableFuture[]::new))
                .join();
        for (int node : List.of(2, 3)) {
            rabbitmqctl(node, "stop_app");
            rabbitmqctl(node, "join_cluster", nodeName(1));
            rabbitmqctl(node, "start_app");
        }
        rabbitmqctl(1, "await_online_nodes", Integer.toString(TestCluster.NODES.size()));
    }

    @Override
    public int amqpPort(int node) {
        return amqpPorts[node - 1];
    }

    @Override
    public int managementPort(int node) {
        return managementPorts[node - 1];
    }

    @Override
    public void kill(int node) {
        DockerClientFactory.instance().client().killContainerCmd(container(node).getContainerId()).exec();
    }

    @Override
    public void restart(int node) {
        DockerClientFactory.instance().client().startContainerCmd(container(node).getContainerId()).exec();
        // Until the node has registered with epmd, await_startup fails at once.
        await("sm" + node + " answers").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions().untilAsserted(() -> rabbitmqctl(node, "ping"));
        rabbitmqctl(node, "await_startup", "--timeout", "120");
    }

    @Override
    public void close() {
        containers.reversed().forEach(ServiceContainers::stop);
        if (network != null) {
            network.close();
        }
    }

    private RabbitMQContainer container(int node) {
        return containers.get(node - 1);
    }

    private String rabbitmqctl(int node, String... arguments) {
        return ServiceContainers.rabbitmqctl(container(node), arguments);
    }

    private static String nodeName(int node) {
        return "sm" + node + "@node" + node;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port", e);
        }
    }
}
