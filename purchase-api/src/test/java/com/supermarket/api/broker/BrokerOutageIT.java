package com.supermarket.api.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Topology;
import com.supermarket.tools.proxy.TcpProxy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The application talks to RabbitMQ through a proxy that the tests cut or freeze. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "api.publish.confirm-timeout=1s", "api.broker.health-timeout=1s",
        "platform.broker.client.channel-rpc-timeout=2s", "spring.rabbitmq.connection-timeout=1s",
        "logging.structured.format.console="})
@DirtiesContext
class BrokerOutageIT extends ServedApiTest {

    private static final TestBroker broker = TestBroker.create("api-outage");
    private static final TcpProxy proxy = new TcpProxy(broker.host(), broker.port());

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.applyTopology(2);
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
        registry.add("spring.rabbitmq.host", proxy::host);
        registry.add("spring.rabbitmq.port", proxy::port);
        registry.add("platform.broker.shards-per-node", () -> 2);
    }

    @AfterAll
    static void tearDown() {
        proxy.close();
        broker.close();
    }

    @BeforeEach
    void healthy() {
        proxy.restore();
        await().atMost(Duration.ofSeconds(30)).until(() -> api.actuator("/health/readiness").statusCode() == 200);
    }

    @Test
    void anUnreachableBrokerAnswers503AndTakesReadinessDownThenBothRecover() {
        proxy.disconnect();
        try {
            HttpResponse<String> response = api.postPurchase(1, ApiClient.body(1));
            assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(response.body()).startsWith("{\"message\":\"");
            // The store queries have a connection of their own, refused alike.
            HttpResponse<String> query = api.get("/items/store/1");
            assertThat(query.statusCode()).as(query.body()).isEqualTo(503);
            assertThat(query.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(query.body()).contains("the broker is unreachable");
            await().atMost(Duration.ofSeconds(15)).until(() -> api.actuator("/health/readiness").statusCode() == 503);
            assertThat(api.actuator("/health/liveness").statusCode()).isEqualTo(200);
        } finally {
            proxy.restore();
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> api.postPurchase(2, ApiClient.body(2)).statusCode() == 201);
        await().atMost(Duration.ofSeconds(15)).until(() -> api.actuator("/health/readiness").statusCode() == 200);
    }

    @Test
    void aFrozenLinkAnswers503OnTheConfirmTimeoutAndNeverAFalse201() {
        long before = broker.messageCountBehind(Topology.PURCHASE_EXCHANGE);
        AtomicInteger created = new AtomicInteger();
        proxy.freeze();
        try {
            HttpResponse<String> response = api.postPurchase(3, ApiClient.body(3));
            assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
            assertThat(response.body()).contains("did not confirm");
            assertThat(response.headers().firstValue("Retry-After")).isPresent();
            await().atMost(Duration.ofSeconds(15)).until(() -> api.actuator("/health/readiness").statusCode() == 503);
        } finally {
            proxy.restore();
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> {
            boolean accepted = api.postPurchase(4, ApiClient.body(4)).statusCode() == 201;
            if (accepted) {
                created.incrementAndGet();
            }
            return accepted;
        });
        // Every 201 is behind the exchange; the refused publish may arrive too once the link
        // thaws (the client was told to retry), hence at least.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(broker.messageCountBehind(Topology.PURCHASE_EXCHANGE) - before).isGreaterThanOrEqualTo(created.get()));
    }
}
