package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestServices;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The store queries' connection and its direct reply-to consumer are open once the API is ready,
 * before any GET: on a loaded machine, opening them on the first GET took longer than the RPC
 * timeout, and that GET failed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "logging.structured.format.console=")
@DirtiesContext
class StoreQueryWarmUpIT extends ServedApiTest {

    private static final TestBroker broker = TestBroker.create("api-query-warm-up");

    static {
        broker.applyTopology(1);
    }

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @AfterAll
    static void tearDown() {
        broker.close();
    }

    @Autowired
    private StoreQueryClient client;

    @Test
    void theQueriesConnectionAndItsReplyConsumerAreOpenBeforeTheFirstGet() {
        await().atMost(Duration.ofSeconds(30)).until(() -> api.actuator("/health/readiness").statusCode() == 200);

        assertThat(client.replyContainerRunning()).isTrue();
        // (A direct reply-to consumer is not counted among a channel's consumers.)
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                TestServices.connectionChannels(broker.vhost()).getOrDefault("purchase-api store queries", -1L)).isPositive());
    }
}
