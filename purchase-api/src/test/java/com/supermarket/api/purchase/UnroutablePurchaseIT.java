package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Topology;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The exchanges exist but no sharding policy does (the deployment was meant to provide it), so
 * no shard queue exists and a purchase would reach no queue; then only {@code purchaseX} is
 * sharded, so the fanout would still route a purchase (to purchaseX's shards) and the broker
 * would neither return nor nack it, yet store-service would never count it. The API must not
 * answer 201 until both sharded exchanges have queues. The tests run in order: each adds a policy.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"platform.broker.manage-policies=false", "platform.broker.retry-interval=200ms",
                "logging.structured.format.console="})
@DirtiesContext
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UnroutablePurchaseIT extends ServedApiTest {

    private static final TestBroker broker = TestBroker.create("api-unroutable");

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @AfterAll
    static void deleteVhost() {
        broker.close();
    }

    @Test
    @Order(1)
    void aPurchaseThatReachesNoQueueIsRefusedWith503() {

        HttpResponse<String> response = api.postPurchase(1, ApiClient.body(1));

        assertThat(broker.shardQueues(Topology.PURCHASE_EXCHANGE)).isEmpty();
        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        assertThat(response.body()).contains("could not route");
        assertThat(response.headers().firstValue("Retry-After")).isPresent();
        assertThat(api.actuator("/prometheus").body()).contains("api_purchases_refused_total{application=\"purchase-api\",reason=\"UNROUTABLE\"} 1.0");
    }

    @Test
    @Order(2)
    void aPurchaseThatWouldReachOnlyOneShardedExchangeIsRefusedUntilBothHaveQueues() {
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
