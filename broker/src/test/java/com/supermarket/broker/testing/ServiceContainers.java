package com.supermarket.broker.testing;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.mariadb.MariaDBContainer;
import org.testcontainers.rabbitmq.RabbitMQContainer;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/**
 * The containers of the integration tests' services, as {@link TestServices} and the fixtures
 * that need a server of their own ({@link TestNode}, {@link TestCluster}) start them: images from
 * {@code RABBITMQ_IMAGE}, {@code MARIADB_IMAGE}, {@code REDIS_IMAGE} and {@code DYNAMODB_IMAGE}
 * (default: the official images the project pins, RabbitMQ's the chart's ({@link RabbitMqVersion});
 * any other is declared a compatible substitute, e.g. the stand-ins of {@code scripts/images.sh}),
 * every RabbitMQ node with each deprecated feature denied ({@value #RABBITMQ_DENIED_FEATURES}), each named {@code PREFIX-SERVICE-PID-N}
 * ({@code TEST_CONTAINER_PREFIX}, default {@code supermarket-it}) and labelled with
 * {@value #LABEL} and this JVM's pid ({@value #PID_LABEL}). Every container still running when the
 * JVM exits is removed by a shutdown hook (Testcontainers' Ryuk does it too where its image can be
 * had); one a killed JVM leaves behind is found by its labels ({@code scripts/test.sh} removes
 * those whose JVM is gone). Thread-safe.
 */
final class ServiceContainers {

    static final String LABEL = "supermarket.test";
    static final String PID_LABEL = "supermarket.test.pid";

    static final String RABBITMQ_PLUGINS = "[rabbitmq_management,rabbitmq_prometheus,rabbitmq_sharding].";
    static final int RABBITMQ_PROMETHEUS_PORT = 15692;
    /** The configuration that denies every deprecated feature, a resource of this test-jar (the scripts read the file). */
    static final String RABBITMQ_DENIED_FEATURES = "rabbitmq/deny-deprecated-features.conf";
    static final String MARIADB_ROOT_PASSWORD = "test";

    static final int PORT_CLASH_ATTEMPTS = 3;

    /** The RabbitMQ the chart's first release ran, from which operators upgrade. */
    static final String RABBITMQ_UPGRADE_SOURCE = "rabbitmq:3.13.7-management";

    private static final long PID = ProcessHandle.current().pid();
    private static final AtomicInteger COUNT = new AtomicInteger();
    private static final List<GenericContainer<?>> RUNNING = new ArrayList<>();
    private static boolean hooked;

    private ServiceContainers() {
    }

    /**
     * A RabbitMQ node (not started) with the management, Prometheus and sharding plugins and every
     * deprecated feature denied, guest/guest (the official image lets guest log in from other
     * hosts, and so must a substitute).
     */
    static RabbitMQContainer rabbitMq() {
        return new RabbitMQContainer(image("RABBITMQ_IMAGE", RabbitMqVersion.officialImage(), "rabbitmq"))
                .withExposedPorts(5672, 15672, RABBITMQ_PROMETHEUS_PORT)
                .withCopyToContainer(Transferable.of(RABBITMQ_PLUGINS), "/etc/rabbitmq/enabled_plugins")
                .withCopyToContainer(MountableFile.forClasspathResource(RABBITMQ_DENIED_FEATURES, 0644),
                        "/etc/rabbitmq/conf.d/20-deny-deprecated-features.conf");
    }

    /**
     * A node (not started) of the older RabbitMQ an upgrade moves from:
     * {@code RABBITMQ_UPGRADE_SOURCE_IMAGE}, default {@value #RABBITMQ_UPGRADE_SOURCE}, the chart's
     * first release's; the same plugins, no deprecated feature denied (a 3.x node refuses a
     * configuration that names one).
     */
    static RabbitMQContainer olderRabbitMq() {
        return new RabbitMQContainer(image("RABBITMQ_UPGRADE_SOURCE_IMAGE", RABBITMQ_UPGRADE_SOURCE, "rabbitmq"))
                .withExposedPorts(5672, 15672, RABBITMQ_PROMETHEUS_PORT)
                .withCopyToContainer(Transferable.of(RABBITMQ_PLUGINS), "/etc/rabbitmq/enabled_plugins");
    }

    /** A MariaDB server (not started), root with {@value #MARIADB_ROOT_PASSWORD}, reached through Connector/J. */
    static MariaDBContainer mariaDb() {
        return new ConnectorJMariaDb(image("MARIADB_IMAGE", "mariadb:11.4", "mariadb"))
                .withUsername("root").withPassword(MARIADB_ROOT_PASSWORD);
    }

    static GenericContainer<?> redis() {
        return new GenericContainer<>(image("REDIS_IMAGE", "redis:7.4.2-alpine", "redis"))
                .withExposedPorts(6379).waitingFor(Wait.forListeningPort());
    }

    /** DynamoDB Local, in memory (the image's own command). */
    static GenericContainer<?> dynamoDb() {
        return new GenericContainer<>(image("DYNAMODB_IMAGE", "amazon/dynamodb-local:2.6.1", "amazon/dynamodb-local"))
                .withExposedPorts(8000).waitingFor(Wait.forListeningPort());
    }

    /** A user network for containers that talk to each other, labelled as the containers are. */
    static Network network() {
        return Network.builder().createNetworkCmdModifier(cmd -> cmd.withName(name("network"))
                .withLabels(Map.of(LABEL, "integration", PID_LABEL, Long.toString(PID)))).build();
    }

    /**
     * Names, labels and starts {@code container} as {@code service}; fails, saying what to do, when
     * no Docker engine answers or the container does not start.
     */
    static <T extends GenericContainer<?>> T start(T container, String service) {
        requireDocker();
        String name = name(service);
        container.withLabel(LABEL, "integration").withLabel(PID_LABEL, Long.toString(PID))
                .withCreateContainerCmdModifier(cmd -> cmd.withName(name));
        try {
            startRetryingPortClashes(container);
        } catch (RuntimeException e) {
            throw new IllegalStateException("the " + service + " container (image " + container.getDockerImageName()
                    + ") did not start. Where no registry can be reached, build the stand-in images with "
                    + "scripts/images.sh, export what 'scripts/images.sh --print' prints, and set "
                    + "TESTCONTAINERS_RYUK_DISABLED=true (scripts/test.sh does all of this); or choose the local "
                    + "services: -Dtest.services=local / TEST_SERVICES=local", e);
        }
        synchronized (RUNNING) {
            RUNNING.add(container);
            if (!hooked) {
                Runtime.getRuntime().addShutdownHook(new Thread(ServiceContainers::stopAll, "stop-test-containers"));
                hooked = true;
            }
        }
        return container;
    }

    /**
     * Starts {@code container}, again (removed first) when Docker refused it a host port it had
     * just handed out ("port is already allocated": Docker 20.10 can give two containers started
     * at once, as a cluster's nodes are, the same random port), at most
     * {@value #PORT_CLASH_ATTEMPTS} times; any other failure is thrown at once.
     */
    static void startRetryingPortClashes(GenericContainer<?> container) {
        for (int attempt = 1; ; attempt++) {
            try {
                container.start();
                return;
            } catch (RuntimeException e) {
                if (attempt == PORT_CLASH_ATTEMPTS || !isPortClash(e)) {
                    throw e;
                }
                container.stop();
            }
        }
    }

    private static boolean isPortClash(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (String.valueOf(cause.getMessage()).contains("port is already allocated")) {
                return true;
            }
        }
        return false;
    }

    /** Stops and removes {@code container}. */
    static void stop(GenericContainer<?> container) {
        synchronized (RUNNING) {
            RUNNING.remove(container);
        }
        container.stop();
    }

    /** Runs {@code command} in {@code container} and returns its output; fails if it exits non-zero. */
    static String exec(GenericContainer<?> container, String... command) {
        try {
            ExecResult result = container.execInContainer(command);
            if (result.getExitCode() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed in " + container.getContainerName()
                        + " (exit " + result.getExitCode() + "):\n" + result.getStdout() + result.getStderr());
            }
            return result.getStdout();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + Arrays.toString(command) + " in " + container.getContainerName(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command[0], e);
        }
    }

    /** Runs {@code rabbitmqctl -q ARGUMENTS} on the node in {@code container}. */
    static String rabbitmqctl(GenericContainer<?> container, String... arguments) {
        String[] command = new String[arguments.length + 2];
        command[0] = "rabbitmqctl";
        command[1] = "-q";
        System.arraycopy(arguments, 0, command, 2, arguments.length);
        return exec(container, command);
    }

    static void requireDocker() {
        boolean available;
        try {
            available = DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            throw new IllegalStateException("Testcontainers could not set up its Docker client. Where the tests run in a "
                    + "container beside the engine (as on the CI machine), set TESTCONTAINERS_HOST_OVERRIDE=localhost "
                    + "(scripts/test.sh does), or choose the local services: -Dtest.services=local / TEST_SERVICES=local", e);
        }
        if (!available) {
            throw new IllegalStateException("No Docker engine answers, and the integration tests start their services "
                    + "(RabbitMQ, MariaDB, Redis, DynamoDB Local) as containers by default. Start one "
                    + "(scripts/docker-engine.sh here; Docker Desktop or dockerd elsewhere), or run the tests against the "
                    + "local services: TEST_SERVICES=local scripts/test.sh, or -Dtest.services=local after "
                    + "scripts/local-services.sh.");
        }
    }

    private static String name(String service) {
        String prefix = System.getenv().getOrDefault("TEST_CONTAINER_PREFIX", "supermarket-it");
        return prefix + "-" + service + "-" + PID + "-" + COUNT.incrementAndGet();
    }

    private static DockerImageName image(String variable, String official, String compatibleWith) {
        String configured = System.getenv(variable);
        String image = configured == null || configured.isBlank() ? official : configured;
        return DockerImageName.parse(image).asCompatibleSubstituteFor(compatibleWith);
    }

    private static void stopAll() {
        List<GenericContainer<?>> running;
        synchronized (RUNNING) {
            running = new ArrayList<>(RUNNING.reversed());
            RUNNING.clear();
        }
        running.forEach(GenericContainer::stop);
    }

    /** MariaDB through the driver the services use (Connector/J), so no second JDBC driver is needed. */
    private static final class ConnectorJMariaDb extends MariaDBContainer {

        ConnectorJMariaDb(DockerImageName image) {
            super(image);
        }

        @Override
        public String getDriverClassName() {
            return "com.mysql.cj.jdbc.Driver";
        }

        @Override
        public String getJdbcUrl() {
            return "jdbc:mysql://" + getHost() + ":" + getMappedPort(3306) + "/" + getDatabaseName();
        }
    }
}
