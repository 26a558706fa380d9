package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.contract.Topology;
import com.supermarket.contract.testing.TestBroker;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The alternative publish mode: one confirmed publish to each sharded exchange. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"platform.publish.mode=TWICE", "logging.structured.format.console="})
@DirtiesContext
class TwicePublishingIT {

    private static final TestBroker broker = TestBroker.create("api-twice");

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.applyTopology(4);
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @AfterAll
    static void deleteVhost() {
        broker.close();
    }

    @LocalServerPort
    private int port;

    @Test
    void nValidPurchasesLeaveExactlyNMessagesBehindEachShardedExchange() {
        ApiClient api = new ApiClient(port);
        int n = 40;
        for (int store = 1; store <= n; store++) {
            assertThat(api.postPurchase(store, ApiClient.body(store)).statusCode()).isEqualTo(201);
        }

        for (String exchange : Topology.SHARDED_EXCHANGES) {
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(broker.messageCountBehind(exchange)).as(exchange).isEqualTo(n));
            assertThat(broker.shardQueues(exchange).stream().filter(queue -> broker.messageCount(queue) > 0))
                    .hasSizeGreaterThan(1);
        }
    }
}
