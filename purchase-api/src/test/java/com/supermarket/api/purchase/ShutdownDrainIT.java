package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.PurchaseApiApplication;
import com.supermarket.api.testing.ApiClient;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.Topology;
import com.supermarket.tools.proxy.TcpProxy;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What a rolling update does to purchase-api: the context is closed (as the JVM's shutdown hook
 * does on SIGTERM) while purchases wait for the broker's confirms, the broker slowed down by a
 * proxy. Every request must get its HTTP answer, and every {@code 201} must be on the broker.
 * The application runs in a context of its own, not the test's, so that the test can close it.
 */
class ShutdownDrainIT {

    private static final int SHARDS = 2;
    private static final int STORES = 64;
    private static final Duration BROKER_LATENCY = Duration.ofMillis(150);

    private static final TestBroker broker = TestBroker.create("api-drain");
    private static final TcpProxy proxy = new TcpProxy(broker.host(), broker.port());

    @AfterAll
    static void tearDown() {
        proxy.close();
        broker.close();
    }

    private static ConfigurableApplicationContext startApi() {
        broker.applyTopology(SHARDS);
        Map<String, Object> properties = new HashMap<>(broker.springProperties());
        properties.put("spring.rabbitmq.host", proxy.host());
        properties.put("spring.rabbitmq.port", proxy.port());
        properties.put("platform.broker.shards-per-node", SHARDS);
        properties.put("server.port", 0);
        properties.put("management.server.port", 0);
        properties.put("logging.structured.format.console", "");
        // The test is about the stop, not admission: no purchase is refused for the slowed confirms.
        properties.put("api.publish.batch.admission-timeout", "5s");
        // As arguments: they override application.yml, which default properties would not.
        String[] arguments = properties.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue())
                .toArray(String[]::new);
        return new SpringApplicationBuilder(PurchaseApiApplication.class).run(arguments);
    }

    @Test
    void closingWhilePurchasesAwaitTheirConfirmsAnswersEveryOneAndEvery201IsOnTheBroker() throws Exception {
        ConfigurableApplicationContext api = startApi();
        ApiClient client = new ApiClient(port(api, "local.server.port"), port(api, "local.management.port"));
        await().atMost(Duration.ofSeconds(30)).until(() -> client.actuator("/health/readiness").statusCode() == 200);
        long batchesBefore = batchesPublished(api);
        proxy.latency(BROKER_LATENCY);

        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        try (ExecutorService tills = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int store = 1; store <= STORES; store++) {
                int s = store;
                answers.add(CompletableFuture.supplyAsync(
                        () -> client.postPurchase(s, ApiClient.body(s), "drain-" + s), tills));
            }
            // Every request is in the application (what the load balancer sent before it let the
            // pod go), batches are in flight, their confirms a round trip of the slowed link away,
            // and the purchases that came meanwhile wait for them: now the pod is told to stop.
            await().atMost(Duration.ofSeconds(10)).until(() -> requestsInProgress(api) + purchasesAnswered(api) >= STORES
                    && batchesPublished(api) > batchesBefore);
            long inFlightAtStop = requestsInProgress(api);
            api.close();
            assertThat(inFlightAtStop).as("purchases in flight when the stop began").isPositive();
        }

        Map<Integer, Long> statuses = new HashMap<>();
        List<UUID> created = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> answer : answers) {
            // ApiClient throws on a connection closed without an answer: the defect this test is for.
            HttpResponse<String> response = answer.join();
            statuses.merge(response.statusCode(), 1L, Long::sum);
            if (response.statusCode() == 201) {
                created.add(UUID.fromString(response.body().replaceAll(".*\"purchaseId\":\"([^\"]+)\".*", "$1")));
            }
        }
        assertThat(statuses).as("the answers by status; the broker was slow, not failing").containsOnlyKeys(201);
        proxy.restore();
        List<UUID> onTheBroker = broker.purchasesBehind(Topology.PURCHASE_EXCHANGE).stream()
                .map(Purchase::purchaseId).collect(Collectors.toList());
        assertThat(onTheBroker).as("every 201 is on the broker, once").containsExactlyInAnyOrderElementsOf(created);
    }

    @Test
    void afterThePreStopCallEveryAnswerClosesItsConnectionSoTheClientMovesBeforeTheStop() throws Exception {
        try (ConfigurableApplicationContext api = startApi()) {
            int port = port(api, "local.server.port");
            ApiClient client = new ApiClient(port, port(api, "local.management.port"));
            await().atMost(Duration.ofSeconds(30)).until(() -> client.actuator("/health/readiness").statusCode() == 200);
            try (Socket till = new Socket("localhost", port)) {
                till.setSoTimeout(10_000);
                assertThat(headOfAnswer(till)).as("an answer before the preStop call").doesNotContainIgnoringCase("connection: close");

                CompletableFuture<HttpResponse<String>> preStop = CompletableFuture.supplyAsync(() -> client.actuator("/drain/5"));
                await().atMost(Duration.ofSeconds(10)).until(() -> headOfAnswerOnANewConnection(port)
                        .toLowerCase(Locale.ROOT).contains("connection: close"));
                assertThat(preStop).as("the hook waits before the SIGTERM").isNotDone();

                assertThat(headOfAnswer(till)).as("the next answer on a connection kept alive from before")
                        .containsIgnoringCase("connection: close");
                assertThat(till.getInputStream().read()).as("the server closed the connection after it").isEqualTo(-1);
                assertThat(preStop.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            }
        }
    }

    /** A GET of the sales page's address on a connection of its own, closed after: its answer's head. */
    private static String headOfAnswerOnANewConnection(int port) throws IOException {
        try (Socket socket = new Socket("localhost", port)) {
            return headOfAnswer(socket);
        }
    }

    /** Sends a GET of the sales page's address (a redirect) on the connection and reads its answer: its status line and headers. */
    private static String headOfAnswer(Socket socket) throws IOException {
        socket.getOutputStream().write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream in = socket.getInputStream();
        String head = readThrough(in, "\r\n\r\n", "the answer's headers");
        Matcher length = Pattern.compile("(?i)\r\ncontent-length: *(\\d+)").matcher(head);
        if (length.find()) {
            in.readNBytes(Integer.parseInt(length.group(1)));
        } else {
            readThrough(in, "0\r\n\r\n", "the answer's chunked body");
        }
        return head;
    }

    /** Reads up to and including {@code end}; what was read. */
    private static String readThrough(InputStream in, String end, String what) throws IOException {
        StringBuilder read = new StringBuilder();
        while (read.indexOf(end) < 0) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed before " + what + " ended: " + read);
            }
            read.append((char) b);
        }
        return read.toString();
    }

    private static int port(ConfigurableApplicationContext context, String property) {
        return context.getEnvironment().getRequiredProperty(property, Integer.class);
    }

    private static long requestsInProgress(ConfigurableApplicationContext context) {
        var active = context.getBean(MeterRegistry.class).find("http.server.requests.active").longTaskTimer();
        return active == null ? 0 : active.activeTasks();
    }

    private static long purchasesAnswered(ConfigurableApplicationContext context) {
        return (long) context.getBean(MeterRegistry.class).find("http.server.requests").tag("method", "POST").timers()
                .stream().mapToDouble(timer -> timer.count()).sum();
    }

    private static long batchesPublished(ConfigurableApplicationContext context) {
        var summary = context.getBean(MeterRegistry.class).find("api.purchases.batch.size").summary();
        return summary == null ? 0 : summary.count();
    }
}
