package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.WireFormat;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * One purchase followed across the three services (docs/operations.md, "Tracing"): the services run from
 * their jars with tracing on, against a vhost of the test broker and the test MariaDB, exporting
 * their spans over OTLP/HTTP to a receiver in this test, with their logs in ECS JSON. A POST
 * carrying a W3C {@code traceparent} must show that trace in purchase-api's server span, in a
 * publish span linked to it, in both consumers' consume spans linked to it, and in the log lines
 * each service writes about the purchase, with its purchaseId and storeId; a GET's trace must
 * continue over the store query RPC into store-service.
 *
 * <p>Needs the service jars (build the reactor, or
 * {@code -pl purchase-api,store-service,purchases-service,deployment -am verify}). Ports: 100
 * from {@code -Dtracing.portBase} (18700). Logs: {@code deployment/target/tracing-it}.
 */
class TracingIT {

    private static final int BASE = Integer.getInteger("tracing.portBase", 18700);
    private static final int API = BASE;
    private static final int STORE = BASE + 1;
    private static final int PURCHASES = BASE + 2;
    private static final int MANAGEMENT = BASE + 10;
    private static final int RECEIVER = BASE + 90;
    private static final String DATABASE = System.getProperty("tracing.database", "purchases_tracing_it");
    private static final int STORE_ID = 3;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** A span as received, with the {@code service.name} of its resource. */
    private record Received(String service, Span span) {
        String traceId() {
            return hex(span.getTraceId());
        }

        String spanId() {
            return hex(span.getSpanId());
        }

        String parentSpanId() {
            return hex(span.getParentSpanId());
        }

        boolean linksTo(String traceId, String spanId) {
            return span.getLinksList().stream()
                    .anyMatch(link -> hex(link.getTraceId()).equals(traceId) && hex(link.getSpanId()).equals(spanId));
        }
    }

    private static final List<Received> SPANS = new CopyOnWriteArrayList<>();
    private static Path dir;
    private static TestBroker broker;
    private static ServiceProcesses processes;
    private static HttpServer receiver;

    @BeforeAll
    static void startReceiverAndServices() throws Exception {
        dir = DeploymentFiles.resolve("deployment/target/tracing-it");
        Files.createDirectories(dir);
        for (String log : List.of("purchase-api", "store-service", "purchases-service")) {
            Files.deleteIfExists(dir.resolve(log + ".log"));
        }
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", RECEIVER), 0);
        receiver.createContext("/v1/traces", TracingIT::receive);
        receiver.start();

        broker = TestBroker.create("tracing");
        processes = new ServiceProcesses(dir, broker);
        Map<String, String> tracing = Map.of(
                "TRACING_ENABLED", "true",
                "TRACING_OTLP_ENDPOINT", "http://127.0.0.1:" + RECEIVER + "/v1/traces",
                "TRACING_SAMPLING_PROBABILITY", "1.0",
                "MANAGEMENT_OPENTELEMETRY_TRACING_EXPORT_SCHEDULE_DELAY", "200ms",
                "LOG_FORMAT", "ecs");
        processes.startService("store-service", STORE, MANAGEMENT + 1, with(tracing,
                "STORE_DURABILITY_STATE_DIR", Files.createTempDirectory(dir, "store-state").toString(),
                "LOGGING_LEVEL_COM_SUPERMARKET_STORE_INGEST", "DEBUG",
                "LOGGING_LEVEL_COM_SUPERMARKET_STORE_QUERY", "DEBUG"));
        TestServices.Database mariaDb = TestServices.mariaDb();
        processes.startService("purchases-service", PURCHASES, MANAGEMENT + 2, with(tracing,
                "SPRING_PROFILES_ACTIVE", "mysql",
                "MYSQL_URL", mariaDb.jdbcUrl(DATABASE + "?createDatabaseIfNotExist=true"),
                "MYSQL_USERNAME", mariaDb.username(), "MYSQL_PASSWORD", mariaDb.password(),
                "LOGGING_LEVEL_COM_SUPERMARKET_PURCHASES_INGEST", "DEBUG"));
        processes.startService("purchase-api", API, MANAGEMENT, with(tracing,
                "LOGGING_LEVEL_COM_SUPERMARKET_API_PURCHASE", "DEBUG"));
        ServiceProcesses.awaitReady(MANAGEMENT, MANAGEMENT + 1, MANAGEMENT + 2);
    }

    @AfterAll
    static void stopEverything() throws Exception {
        try {
            if (processes != null) {
                processes.close();
            }
        } finally {
            if (receiver != null) {
                receiver.stop(0);
            }
            if (broker != null) {
                broker.close();
            }
        }
    }

    @Test
    void aPurchasesTraceIsInEveryServicesSpansAndLogs() throws Exception {
        String trace = randomHex(16);
        HttpResponse<String> created = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + API + "/purchase/"
                        + STORE_ID + "/customer/3000/date/20210101"))
                .header("Content-Type", "application/json").header("traceparent", "00-" + trace + "-" + randomHex(8) + "-01")
                .timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString("{\"items\":[{\"ItemID\":\"7\",\"numberOfItems\":2}]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String purchaseId = WireFormat.mapper().readTree(created.body()).path("purchaseId").asString();

        await("every service's spans of the purchase").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Received post = span("purchase-api", trace, Span.SpanKind.SPAN_KIND_SERVER);
            Received publish = SPANS.stream().filter(received -> received.span().getName().equals("purchases publish")
                    && received.linksTo(trace, post.spanId())).findFirst()
                    .orElseThrow(() -> new AssertionError("no publish span linked to the POST's in " + received()));
            for (String consumer : List.of("store-service", "purchases-service")) {
                assertThat(SPANS).as("%s's consume span", consumer).anySatisfy(received -> {
                    assertThat(received.service()).isEqualTo(consumer);
                    assertThat(received.span().getName()).isEqualTo(consumer + " consume");
                    assertThat(received.span().getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CONSUMER);
                    assertThat(received.linksTo(trace, post.spanId())).as("linked to the POST's span").isTrue();
                    assertThat(received.parentSpanId()).as("a child of the publish").isEqualTo(publish.spanId());
                });
            }
        });
        await("every service's log line of the purchase").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (String service : List.of("purchase-api", "store-service", "purchases-service")) {
                assertThat(logLines(service)).as("%s's log lines", service).anySatisfy(line -> {
                    assertThat(line.path("traceId").asString()).isEqualTo(trace);
                    assertThat(line.path("purchaseId").asString()).isEqualTo(purchaseId);
                    assertThat(line.path("storeId").asString()).isEqualTo(String.valueOf(STORE_ID));
                });
            }
        });
    }

    @Test
    void aStoreQuerysTraceContinuesIntoStoreService() throws Exception {
        String trace = randomHex(16);
        HttpResponse<String> answered = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + API
                        + "/items/store/" + STORE_ID))
                .header("traceparent", "00-" + trace + "-" + randomHex(8) + "-01").timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answered.statusCode()).as(answered.body()).isEqualTo(200);

        await("the store query's spans").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Received get = span("purchase-api", trace, Span.SpanKind.SPAN_KIND_SERVER);
            Received client = span("purchase-api", trace, Span.SpanKind.SPAN_KIND_CLIENT);
            Received server = span("store-service", trace, Span.SpanKind.SPAN_KIND_SERVER);
            assertThat(client.parentSpanId()).isEqualTo(get.spanId());
            assertThat(server.parentSpanId()).isEqualTo(client.spanId());
            assertThat(server.span().getName()).isEqualTo("store query answer");
        });
        await("store-service's log line of the query").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(logLines("store-service")).anySatisfy(line -> {
                    assertThat(line.path("traceId").asString()).isEqualTo(trace);
                    assertThat(line.path("message").asString()).startsWith("Answered a store query");
                }));
    }

    /** The span of {@code service} in {@code trace} of that kind; an assertion error (awaited again) until there is one. */
    private static Received span(String service, String trace, Span.SpanKind kind) {
        return SPANS.stream().filter(received -> received.service().equals(service) && received.traceId().equals(trace)
                && received.span().getKind() == kind).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " span of " + service + " in trace " + trace + " among " + received()));
    }

    /** What was received, in short: service, name, trace id. */
    private static List<String> received() {
        return SPANS.stream().map(received -> received.service() + " '" + received.span().getName() + "' " + received.traceId())
                .toList();
    }

    /** The service's log lines that are JSON (ECS), parsed. */
    private static List<JsonNode> logLines(String service) throws IOException {
        return Files.readAllLines(processes.log(service)).stream().filter(line -> line.startsWith("{"))
                .map(line -> WireFormat.mapper().readTree(line)).toList();
    }

    /** The OTLP/HTTP receiver: decodes an export request's spans and answers success. */
    private static void receive(HttpExchange exchange) throws IOException {
        try (exchange; InputStream body = "gzip".equals(exchange.getRequestHeaders().getFirst("Content-Encoding"))
                ? new GZIPInputStream(exchange.getRequestBody()) : exchange.getRequestBody()) {
            ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
            for (ResourceSpans resource : request.getResourceSpansList()) {
                String service = resource.getResource().getAttributesList().stream()
                        .filter(attribute -> attribute.getKey().equals("service.name")).map(KeyValue::getValue)
                        .map(value -> value.getStringValue()).findFirst().orElse("?");
                for (ScopeSpans scope : resource.getScopeSpansList()) {
                    scope.getSpansList().forEach(span -> SPANS.add(new Received(service, span)));
                }
            }
            byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
            exchange.getResponseBody().write(answer);
        }
    }

    private static Map<String, String> with(Map<String, String> base, String... more) {
        Map<String, String> all = new HashMap<>(base);
        for (int i = 0; i < more.length; i += 2) {
            all.put(more[i], more[i + 1]);
        }
        return all;
    }

    private static String hex(ByteString bytes) {
        return HexFormat.of().formatHex(bytes.toByteArray());
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
