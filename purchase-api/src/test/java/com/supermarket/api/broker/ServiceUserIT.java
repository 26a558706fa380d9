package com.supermarket.api.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.testing.TestBroker;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * purchase-api as a deployment runs it: its own least-privilege broker user
 * ({@link BrokerUsers#PURCHASE_API}: write on the ingress and the default exchange, nothing to
 * read or configure), not declaring, on a topology the deployment's set-up declared. It becomes
 * ready (every readiness check's broker round trip needs only its rights; RabbitMQ 4.3 refuses a
 * passive declare to a user with no right on its target) and takes purchases.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "logging.structured.format.console=")
@DirtiesContext
class ServiceUserIT extends ServedApiTest {

    private static final TestBroker broker = TestBroker.create("api-service-user");

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.applyTopology(2);
        TestBroker user = broker.user(BrokerUsers.PURCHASE_API);
        user.springProperties().forEach((key, value) -> registry.add(key, () -> value));
        registry.add("platform.broker.shards-per-node", () -> 2);
        registry.add("platform.broker.declare", () -> false);
        registry.add("platform.broker.manage-policies", () -> false);
    }

    @AfterAll
    static void tearDown() {
        broker.close();
    }

    @Test
    void becomesReadyAndTakesPurchasesWithItsOwnRightsOnly() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            HttpResponse<String> readiness = api.actuator("/health/readiness");
            assertThat(readiness.statusCode()).as(readiness.body()).isEqualTo(200);
        });

        HttpResponse<String> purchase = api.postPurchase(7, ApiClient.body(7));

        assertThat(purchase.statusCode()).as(purchase.body()).isEqualTo(201);
    }
}
