package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.contract.Topology;
import com.supermarket.contract.testing.TestBroker;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Only {@code purchaseX} is sharded, {@code storeX} has no queue: the fanout still routes a
 * purchase (to purchaseX's shards), so the broker neither returns nor nacks it, yet store-service
 * would never count it. The API must not answer 201 until both sharded exchanges have queues.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"platform.broker.manage-policies=false", "platform.broker.retry-interval=200ms",
                "logging.structured.format.console="})
@DirtiesContext
class HalfRoutablePurchaseIT {

    private static final TestBroker broker = TestBroker.create("api-half-routable");

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @AfterAll
    static void deleteVhost() {
        broker.close();
    }

    @LocalServerPort
    private int port;

    @LocalManagementPort
    private int managementPort;

    @Test
    void aPurchaseThatWouldReachOnlyOneShardedExchangeIsRefusedUntilBothHaveQueues() {
        ApiClient api = new ApiClient(port, managementPort);
        shard(Topology.PURCHASE_EXCHANGE);
        await().atMost(Duration.ofSeconds(30)).until(() -> !broker.shardQueues(Topology.PURCHASE_EXCHANGE).isEmpty());
        await().atMost(Duration.ofSeconds(10)).until(() -> api.actuator("/health/readiness").body().contains("no shard queue behind storeX"));

        HttpResponse<String> refused = api.postPurchase(1, ApiClient.body(1));

        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
        assertThat(refused.body()).contains("could not route").contains("storeX");
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(broker.messageCountBehind(Topology.PURCHASE_EXCHANGE)).isZero();

        shard(Topology.STORE_EXCHANGE);
        await().atMost(Duration.ofSeconds(30)).until(() -> api.postPurchase(2, ApiClient.body(2)).statusCode() == 201);
        assertThat(broker.messageCountBehind(Topology.STORE_EXCHANGE)).isEqualTo(1);
        assertThat(broker.messageCountBehind(Topology.PURCHASE_EXCHANGE)).isEqualTo(1);
    }

    private static void shard(String exchange) {
        broker.management().putPolicy(broker.vhost(), Topology.shardingPolicyName(exchange), "^" + exchange + "$",
                "exchanges", 10, Map.of("shards-per-node", 1, "routing-key", "shard"));
    }
}
