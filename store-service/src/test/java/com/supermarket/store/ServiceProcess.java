package com.supermarket.store;

import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * store-service as a separate process started from the built jar ({@code target/store-service-*.jar},
 * so it runs after {@code package}), pointed at a {@link TestBroker} vhost: what the crash test
 * kills and the benchmarks time; or, for the tests of what purchase-api asks of it, purchase-api
 * from its jar ({@link #purchaseApi}, built before this module). Its output goes to a file under
 * {@code target/}. Not thread-safe.
 */
final class ServiceProcess implements AutoCloseable {

    /** purchase-api's jar, built earlier in the reactor (this module's test dependency on its pom orders the build). */
    private static final Path PURCHASE_API_JAR = Path.of("..", "purchase-api", "target", "purchase-api-0.1.0-SNAPSHOT.jar");

    private final String service;
    private final Path jar;
    private final TestBroker broker;
    private final Map<String, String> settings;
    private final String[] jvmOptions;
    private final int port;
    private final int managementPort;
    private final HttpClient http = HttpClient.newHttpClient();
    private Process process;
    private Path output;
    private int starts;

    /**
     * @param settings   environment variables on top of the broker's (e.g. {@code STORE_DURABILITY_STATE_DIR})
     * @param jvmOptions options before {@code -jar}
     */
    ServiceProcess(TestBroker broker, Map<String, String> settings, String... jvmOptions) throws IOException {
        this("store-service", jar(), broker, settings, jvmOptions);
    }

    /** purchase-api from its jar, against {@code broker}, with {@code settings} on top. */
    static ServiceProcess purchaseApi(TestBroker broker, Map<String, String> settings, String... jvmOptions) throws IOException {
        if (!Files.isRegularFile(PURCHASE_API_JAR)) {
            throw new IllegalStateException(PURCHASE_API_JAR + " is missing: build purchase-api first "
                    + "(./mvnw -pl store-service -am verify builds it before this module)");
        }
        return new ServiceProcess("purchase-api", PURCHASE_API_JAR, broker, settings, jvmOptions);
    }

    private ServiceProcess(String service, Path jar, TestBroker broker, Map<String, String> settings, String... jvmOptions)
            throws IOException {
        this.service = service;
        this.jar = jar;
        this.broker = broker;
        this.settings = Map.copyOf(settings);
        this.jvmOptions = jvmOptions.clone();
        this.port = settings.containsKey("SERVER_PORT") ? Integer.parseInt(settings.get("SERVER_PORT")) : freePort();
        this.managementPort = settings.containsKey("MANAGEMENT_PORT")
                ? Integer.parseInt(settings.get("MANAGEMENT_PORT")) : freePort();
    }

    void start(String outputName) throws IOException {
        starts++;
        output = Path.of("target", outputName + "-" + starts + ".log");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(jvmOptions));
        command.addAll(List.of("-jar", jar.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        Map<String, String> env = new HashMap<>();
        env.put("RABBITMQ_HOST", broker.host());
        env.put("RABBITMQ_PORT", Integer.toString(broker.port()));
        env.put("RABBITMQ_USERNAME", broker.username());
        env.put("RABBITMQ_PASSWORD", broker.password());
        env.put("RABBITMQ_VHOST", broker.vhost());
        env.put("RABBITMQ_MANAGEMENT_URL", broker.managementUri().toString());
        env.put("SERVER_PORT", Integer.toString(port));
        env.put("MANAGEMENT_PORT", Integer.toString(managementPort));
        env.put("LOG_FORMAT", "");
        env.putAll(settings);
        builder.environment().putAll(env);
        process = builder.start();
    }

    Process process() {
        return process;
    }

    Path output() {
        return output;
    }

    int starts() {
        return starts;
    }

    /** SIGKILL, and waits until the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("pid " + process.pid() + " survived SIGKILL for 30 s");
        }
    }

    boolean isReady() {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/health/readiness"))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void awaitReady(Duration atMost) {
        await(service + " ready (start " + starts + ")").atMost(atMost).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException(service + " exited with " + process.exitValue() + ", see " + output);
                    }
                    return isReady();
                });
    }

    /** The sum of one Prometheus counter or gauge, e.g. {@code store_purchases_applied_total}. */
    double metric(String name) throws IOException, InterruptedException {
        return metric(name, "");
    }

    /** The sum of the series of {@code name} whose labels hold {@code label}, e.g. {@code kind="TOP_ITEMS"}. */
    double metric(String name, String label) throws IOException, InterruptedException {
        String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/prometheus"))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
        return body.lines().filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                .filter(line -> line.contains(label))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    /** Graceful stop (SIGTERM), then SIGKILL if it does not stop in 30 s. */
    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }

    private static Path jar() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(f -> f.getFileName().toString().matches("store-service-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("target/store-service-*.jar is missing: build it first "
                            + "(./mvnw -pl store-service -am verify runs this after 'package')"));
        }
    }

    /**
     * Runs store-service's jar as a command ({@code java -jar store-service-*.jar args...}) to its
     * end, its output (both streams) into {@code target/<outputName>.log}.
     *
     * @return its exit status
     */
    static int command(String outputName, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-jar", jar().toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(Path.of("target", outputName + ".log").toFile()).start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " still ran after 5 minutes");
        }
        return process.exitValue();
    }

    /** The server port ({@code SERVER_PORT}): the {@code /state} endpoints. */
    int port() {
        return port;
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
