package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The services started from their jars, as separate processes against a test broker, each
 * logging to {@code <name>.log} in a folder of the test's; stopped in reverse order by
 * {@link #close}. Needs the service jars (build the reactor, or
 * {@code -pl purchase-api,store-service,purchases-service,deployment -am verify}). Not thread-safe:
 * one test class's setup and teardown use it.
 */
final class ServiceProcesses implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final Path dir;
    private final TestBroker broker;
    private final List<Process> started = new ArrayList<>();

    /** Processes logging to {@code dir}, the services among them connecting to {@code broker}. */
    ServiceProcesses(Path dir, TestBroker broker) {
        this.dir = dir;
        this.broker = broker;
    }

    /** The log file of what was started as {@code name}. */
    Path log(String name) {
        return dir.resolve(name + ".log");
    }

    /**
     * Starts {@code module}'s jar on {@code port} (its actuator on {@code managementPort}) against
     * the broker, with plain log lines unless {@code extra} (applied last) says otherwise.
     */
    void startService(String module, int port, int managementPort, Map<String, String> extra) throws IOException {
        Path jar = DeploymentFiles.resolve(module + "/target/" + module + "-0.1.0-SNAPSHOT.jar");
        assertThat(jar).as("%s's jar: build it first (./mvnw -pl purchase-api,store-service,purchases-service,deployment -am verify)",
                module).isRegularFile();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-jar", jar.toString());
        Map<String, String> env = builder.environment();
        env.put("SERVER_PORT", String.valueOf(port));
        env.put("MANAGEMENT_PORT", String.valueOf(managementPort));
        env.put("RABBITMQ_HOST", broker.host());
        env.put("RABBITMQ_PORT", String.valueOf(broker.port()));
        env.put("RABBITMQ_USERNAME", broker.username());
        env.put("RABBITMQ_PASSWORD", broker.password());
        env.put("RABBITMQ_VHOST", broker.vhost());
        env.put("RABBITMQ_MANAGEMENT_URL", broker.managementUri().toString());
        env.put("BROKER_SHARDS_PER_NODE", "2");
        env.put("LOG_FORMAT", "");
        env.remove("JAVA_TOOL_OPTIONS");
        env.putAll(extra);
        start(builder, module);
    }

    /** Starts any process, its output to {@link #log}{@code (name)}. */
    void start(ProcessBuilder builder, String name) {
        builder.redirectErrorStream(true).redirectOutput(log(name).toFile());
        try {
            started.add(builder.start());
        } catch (IOException e) {
            throw new AssertionError("cannot start " + name + " (" + builder.command().getFirst() + "): " + e.getMessage(), e);
        }
    }

    /** Waits until the readiness probe on each of {@code managementPorts} answers 200. */
    static void awaitReady(int... managementPorts) {
        for (int port : managementPorts) {
            URI readiness = URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness");
            await("readiness at " + readiness).atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                    .ignoreExceptions().until(() -> HTTP.send(HttpRequest.newBuilder(readiness)
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
        }
    }

    /** Stops what was started, last first, forcibly after 30 s. */
    @Override
    public void close() throws InterruptedException {
        for (Process process : started.reversed()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
