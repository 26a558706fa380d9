package com.supermarket.broker.testing;

import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.mariadb.MariaDBContainer;
import org.testcontainers.rabbitmq.RabbitMQContainer;
import tools.jackson.databind.JsonNode;

/**
 * Where the integration tests find RabbitMQ, MariaDB, Redis and DynamoDB Local: the one place
 * that decides, for every module.
 *
 * <p>The mode is {@code -Dtest.services} (which the build passes to the tests), else
 * {@code TEST_SERVICES}: {@link Mode#CONTAINERS} (the default) starts each service as a container
 * through Testcontainers, once per test JVM, on first use, shared by every test class of the
 * module (see {@link ServiceContainers} for the images); without a Docker engine the tests fail and
 * say how to start one or how to choose the other mode. {@link Mode#LOCAL} uses the services of
 * {@code scripts/local-services.sh}, named by environment ({@code RABBITMQ_HOST}, {@code MYSQL_HOST},
 * {@code REDIS_HOST}...; default the local ones), for a machine without Docker. Neither mode ever
 * skips a test. Thread-safe.
 */
public final class TestServices {

    /** How the tests get their services. */
    public enum Mode {
        /** Containers started by the tests (Testcontainers). */
        CONTAINERS,
        /** The machine's own services (scripts/local-services.sh). */
        LOCAL
    }

    /** A RabbitMQ node with the sharding and management plugins, as an administrator may use it. */
    public record Broker(String host, int port, URI managementUri, String username, String password) {
    }

    /** A Redis server. */
    public record Redis(String host, int port) {
    }

    /** A MariaDB (MySQL-compatible) server and its administrator. */
    public record Database(String host, int port, String username, String password) {

        /** A Connector/J URL of {@code database} on this server ({@code ""}: none). */
        public String jdbcUrl(String database) {
            return "jdbc:mysql://" + host + ":" + port + "/" + database;
        }
    }

    private static final Shared<RabbitMQContainer> RABBITMQ = new Shared<>(() -> ServiceContainers.rabbitMq(), "rabbitmq");
    private static final Shared<MariaDBContainer> MARIADB = new Shared<>(() -> ServiceContainers.mariaDb(), "mariadb");
    private static final Shared<GenericContainer<?>> REDIS = new Shared<>(ServiceContainers::redis, "redis");
    private static final Shared<GenericContainer<?>> DYNAMODB = new Shared<>(ServiceContainers::dynamoDb, "dynamodb");

    private TestServices() {
    }

    public static Mode mode() {
        String chosen = System.getProperty("test.services");
        if (chosen == null || chosen.isBlank()) {
            chosen = System.getenv("TEST_SERVICES");
        }
        if (chosen == null || chosen.isBlank()) {
            return Mode.CONTAINERS;
        }
        try {
            return Mode.valueOf(chosen.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("test.services / TEST_SERVICES is '" + chosen + "': choose containers or local", e);
        }
    }

    /** The shared broker; in {@link Mode#LOCAL} the one of {@code RABBITMQ_HOST}... (default 127.0.0.1, guest). */
    public static Broker rabbitMq() {
        if (mode() == Mode.LOCAL) {
            String host = env("RABBITMQ_HOST", "127.0.0.1");
            Broker broker = new Broker(host, Integer.parseInt(env("RABBITMQ_PORT", "5672")),
                    URI.create(env("RABBITMQ_MANAGEMENT_URL", "http://" + host + ":15672")),
                    env("RABBITMQ_USERNAME", "guest"), env("RABBITMQ_PASSWORD", "guest"));
            requireReachable(broker.host(), broker.port(), "RabbitMQ (AMQP)");
            requireReachable(broker.managementUri().getHost(), broker.managementUri().getPort(), "the RabbitMQ management API");
            return broker;
        }
        return broker(RABBITMQ.get());
    }

    /** The shared Redis; in {@link Mode#LOCAL} {@code REDIS_HOST}:{@code REDIS_PORT} (default 127.0.0.1:6379). */
    public static Redis redis() {
        if (mode() == Mode.LOCAL) {
            Redis redis = new Redis(env("REDIS_HOST", "127.0.0.1"), Integer.parseInt(env("REDIS_PORT", "6379")));
            requireReachable(redis.host(), redis.port(), "Redis");
            return redis;
        }
        GenericContainer<?> redis = REDIS.get();
        return new Redis(redis.getHost(), redis.getMappedPort(6379));
    }

    /**
     * The shared MariaDB, whose global state no test may change (each works in a database of its
     * own); in {@link Mode#LOCAL} {@code MYSQL_HOST}:{@code MYSQL_PORT} (default 127.0.0.1:3306), root
     * without a password.
     */
    public static Database mariaDb() {
        if (mode() == Mode.LOCAL) {
            Database database = new Database(env("MYSQL_HOST", "127.0.0.1"), Integer.parseInt(env("MYSQL_PORT", "3306")),
                    "root", "");
            requireReachable(database.host(), database.port(), "MariaDB/MySQL");
            return database;
        }
        return database(MARIADB.get());
    }

    /**
     * A MariaDB server of the caller's own, for faults that change a server's global state (such
     * as {@code read_only}); closing it removes it. Containers only: on local services a test
     * runs its own {@code mariadbd}.
     */
    public static PrivateService<Database> newMariaDb() {
        requireContainers("a MariaDB server of its own");
        MariaDBContainer container = ServiceContainers.start(ServiceContainers.mariaDb(), "mariadb");
        return new PrivateService<>(database(container), () -> ServiceContainers.stop(container));
    }

    /** The shared DynamoDB Local's endpoint. Containers only: on local services it runs in the test's JVM. */
    public static URI dynamoDb() {
        requireContainers("DynamoDB Local as a container");
        GenericContainer<?> dynamoDb = DYNAMODB.get();
        return URI.create("http://" + dynamoDb.getHost() + ":" + dynamoDb.getMappedPort(8000));
    }

    /**
     * Runs {@code rabbitmqctl -q ARGUMENTS} against the shared broker (in its container, or the
     * local tool) and returns its output; fails if it exits non-zero.
     */
    public static String rabbitmqctl(String... arguments) {
        if (mode() == Mode.LOCAL) {
            List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q"));
            command.addAll(List.of(arguments));
            return Scripts.run(command, Duration.ofSeconds(30), "rabbitmqctl on the PATH, next to the local broker");
        }
        return ServiceContainers.rabbitmqctl(RABBITMQ.get(), arguments);
    }

    /**
     * The count {@code column} of {@code rabbitmqctl list_queues} (e.g. {@code messages_unacknowledged})
     * of each queue of {@code vhost} on the shared broker, as the queues count it now (the
     * management API's counts come from its metrics collection, which the test brokers deny).
     */
    public static Map<String, Long> queueCounts(String vhost, String column) {
        return queueCounts(rabbitmqctl("list_queues", "-p", vhost, "name", column, "--no-table-headers"));
    }

    /** Parses {@code list_queues name COUNT --no-table-headers}: queue name to count. */
    static Map<String, Long> queueCounts(String listQueues) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String line : listQueues.split("\n")) {
            int tab = line.lastIndexOf('\t');
            if (tab > 0) {
                counts.put(line.substring(0, tab), Long.parseLong(line.substring(tab + 1).strip()));
            }
        }
        return counts;
    }

    /**
     * The connections of {@code vhost} on the shared broker, each as its client-provided name and
     * its number of channels, as the broker lists them now.
     */
    public static Map<String, Long> connectionChannels(String vhost) {
        Map<String, Long> channels = new LinkedHashMap<>();
        JsonNode connections = WireFormat.mapper().readTree(
                rabbitmqctl("list_connections", "vhost", "client_properties", "channels", "--formatter", "json"));
        for (JsonNode connection : connections) {
            if (vhost.equals(connection.path("vhost").asString())) {
                String name = "";
                // client_properties: [key, type, value] triples
                for (JsonNode property : connection.path("client_properties")) {
                    if ("connection_name".equals(property.path(0).asString())) {
                        name = property.path(2).asString();
                    }
                }
                channels.put(name, connection.path("channels").asLong());
            }
        }
        return channels;
    }

    static Broker broker(RabbitMQContainer container) {
        return new Broker(container.getHost(), container.getAmqpPort(), URI.create(container.getHttpUrl()),
                container.getAdminUsername(), container.getAdminPassword());
    }

    private static Database database(MariaDBContainer container) {
        return new Database(container.getHost(), container.getMappedPort(3306), container.getUsername(), container.getPassword());
    }

    static void requireContainers(String what) {
        if (mode() != Mode.CONTAINERS) {
            throw new IllegalStateException(what + " needs test.services=containers (it is " + mode() + ")");
        }
    }

    static void requireReachable(String host, int port, String what) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 2000);
        } catch (IOException e) {
            throw new IllegalStateException(what + " is not reachable at " + host + ":" + port + " (test.services=local). "
                    + "Start the local services with scripts/local-services.sh (or set the *_HOST/*_PORT variables), "
                    + "or let the tests start containers: test.services=containers, the default, with a Docker engine.", e);
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** A service of one test's own; {@link #close} stops and removes it. */
    public record PrivateService<T>(T service, Runnable stop) implements AutoCloseable {

        @Override
        public void close() {
            stop.run();
        }
    }

    /**
     * A container started once, on first use, and shared by the JVM's tests. A failed start is
     * remembered and thrown again, so that every test class needing it fails with the cause
     * rather than trying again.
     */
    private static final class Shared<T extends GenericContainer<?>> {

        private final Supplier<T> create;
        private final String service;
        private T started;
        private RuntimeException failure;

        Shared(Supplier<T> create, String service) {
            this.create = create;
            this.service = service;
        }

        synchronized T get() {
            if (failure != null) {
                throw new IllegalStateException("the shared " + service + " container failed to start earlier", failure);
            }
            if (started == null) {
                try {
                    started = ServiceContainers.start(create.get(), service);
                } catch (RuntimeException e) {
                    failure = e;
                    throw e;
                }
            }
            return started;
        }
    }
}
