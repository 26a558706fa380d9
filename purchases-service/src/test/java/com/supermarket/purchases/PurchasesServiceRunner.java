package com.supermarket.purchases;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.client.RestClient;

/**
 * Runs the real application (one profile, random HTTP port) against a {@link TestBroker} vhost,
 * and talks to it over HTTP like an operator would. Started and closed by the test, so the
 * application always stops before its vhost and database are deleted.
 */
final class PurchasesServiceRunner implements AutoCloseable {

    private final ConfigurableApplicationContext context;
    private final RestClient http;
    private final Instant startedAt;

    PurchasesServiceRunner(String profile, TestBroker broker, Map<String, String> extraProperties) {
        this(profile, broker.springProperties(), extraProperties);
    }

    /** @param brokerProperties where the broker is ({@code spring.rabbitmq.*}, {@code platform.broker.*}) */
    PurchasesServiceRunner(String profile, Map<String, String> brokerProperties, Map<String, String> extraProperties) {
        Map<String, String> properties = new HashMap<>(brokerProperties);
        properties.put("platform.broker.shards-per-node", "2");
        properties.put("platform.broker.discovery-interval", "2s");
        properties.put("platform.broker.retry-interval", "500ms");
        properties.put("server.port", "0");
        // Actuator on the same (random) port as the lookups, so one client reaches both.
        properties.put("management.server.port", "");
        properties.put("purchases.ingest.retry-max-backoff", "1s");
        properties.put("logging.structured.format.console", "");
        properties.putAll(extraProperties);
        // As command-line arguments: they win over application.yml (builder "properties" would not).
        String[] args = properties.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
        context = new SpringApplicationBuilder(PurchasesApplication.class).profiles(profile).run(args);
        startedAt = Instant.now();
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        http = RestClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultStatusHandler(HttpStatusCode::isError, (request, response) -> { })
                .build();
    }

    /** When the application had started (its context refreshed, its web server listening). */
    Instant startedAt() {
        return startedAt;
    }

    long storedCount() {
        Map<?, ?> body = http.get().uri("/purchases/count").retrieve().body(Map.class);
        return ((Number) body.get("count")).longValue();
    }

    /** The stored purchase as the service returns it, or null if it answers 404. */
    Purchase find(UUID purchaseId) {
        var response = http.get().uri("/purchases/{id}", purchaseId).retrieve().toEntity(byte[].class);
        if (response.getStatusCode().value() == 404) {
            return null;
        }
        if (!response.getStatusCode().is2xxSuccessful()) {
            throw new IllegalStateException("GET /purchases/" + purchaseId + " answered " + response.getStatusCode());
        }
        return WireFormat.decode(response.getBody(), Purchase.class);
    }

    int readinessStatus() {
        return http.get().uri("/actuator/health/readiness").retrieve().toBodilessEntity().getStatusCode().value();
    }

    int livenessStatus() {
        return http.get().uri("/actuator/health/liveness").retrieve().toBodilessEntity().getStatusCode().value();
    }

    String prometheus() {
        return http.get().uri("/actuator/prometheus").retrieve().body(String.class);
    }

    /** A counter summed over its tags. */
    double counter(String name) {
        return context.getBean(MeterRegistry.class).find(name).counters().stream().mapToDouble(Counter::count).sum();
    }

    /** Deliveries handed to the writer so far, duplicates included (the sum of the batch sizes). */
    double purchasesWritten() {
        return context.getBean(MeterRegistry.class).summary("purchases.batch.size").totalAmount();
    }

    RestClient http() {
        return http;
    }

    @Override
    public void close() {
        context.close();
    }
}
