package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.api.testing.TestRedis;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.Topology;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * purchase-api against the real RabbitMQ (a throw-away vhost, the sharded mode with one shard
 * queue per sharded exchange, bounded at {@value #BOUND} messages by the policies purchase-api
 * applies) and the real test Redis (keys under a prefix of this run, expiring on their own):
 * purchases-service has fallen behind (nothing consumes {@code purchaseX}'s shard), store-service
 * keeps up (this test takes {@code storeX}'s shard as it goes, as store-service would).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"platform.broker.shards-per-node=1", "platform.broker.shard-queue-max-length=" + FullShardQueueIT.BOUND,
                "platform.broker.shard-queue-max-length-bytes=0", "api.idempotency.ttl=10m", "logging.structured.format.console="})
@DirtiesContext
class FullShardQueueIT extends ServedApiTest {

    static final int BOUND = 3;
    private static final int STORE = 7;

    private static final TestBroker broker = TestBroker.create("api-full-shard");

    @DynamicPropertySource
    static void services(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
        registry.add("api.idempotency.redis-url", TestRedis::directUrl);
        registry.add("api.idempotency.key-prefix", () -> "full-shard-test:" + UUID.randomUUID() + ":");
    }

    @AfterAll
    static void deleteVhost() {
        broker.close();
    }

    /**
     * Once the shard queue that stores purchases is full, the next POST is answered {@code 503}
     * with {@code Retry-After} and not stored; its publish was nacked, yet the store shard, which
     * had room, took it (RabbitMQ enqueues a message in every queue that can take it and nacks it
     * if any one refused). Once the queue is drained, the till's retry with the same key is
     * accepted under the same purchase id: stored once, and delivered to store-service twice
     * under one id, which store-service counts once (its per-store window of recent ids). So
     * every purchase is stored and counted exactly once.
     */
    @Test
    void aFullShardQueueRefusesWith503AndTheRetryWithTheSameKeyIsStoredAndCountedOnce() {
        await().atMost(Duration.ofSeconds(30)).until(() -> broker.shardQueues(Topology.PURCHASE_EXCHANGE).size() == 1
                && broker.shardQueues(Topology.STORE_EXCHANGE).size() == 1
                && api.actuator("/health/readiness").statusCode() == 200);
        String purchaseShard = broker.shardQueues(Topology.PURCHASE_EXCHANGE).getFirst();
        String storeShard = broker.shardQueues(Topology.STORE_EXCHANGE).getFirst();
        List<UUID> accepted = new ArrayList<>();
        List<Purchase> counted = new ArrayList<>();

        for (int receipt = 1; receipt <= BOUND; receipt++) {
            HttpResponse<String> response = api.postPurchase(STORE, ApiClient.body(100 + receipt), "till-1/receipt-" + receipt);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
            accepted.add(purchaseId(response));
            counted.addAll(broker.take(storeShard));
        }
        assertThat(broker.messageCount(purchaseShard)).as("the shard queue is full").isEqualTo(BOUND);

        HttpResponse<String> refused = api.postPurchase(STORE, ApiClient.body(200), "till-1/receipt-full");

        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refused.body()).contains("a queue it goes to is full", "retry later with the same Idempotency-Key");
        assertThat(broker.purchasesBehind(Topology.PURCHASE_EXCHANGE)).as("not stored").extracting(Purchase::purchaseId)
                .containsExactlyElementsOf(accepted);
        assertThat(api.actuator("/prometheus").body())
                .containsPattern("api_purchases_refused_total\\{[^}]*reason=\"NACK\"[^}]*} 1.0");
        List<Purchase> tookTheRefused = broker.take(storeShard);
        assertThat(tookTheRefused).as("the store shard had room and took the refused purchase")
                .singleElement().satisfies(p -> assertThat(p.items().getFirst().itemId()).isEqualTo(200));
        counted.addAll(tookTheRefused);

        List<Purchase> stored = new ArrayList<>(broker.take(purchaseShard));
        HttpResponse<String> retried = api.postPurchase(STORE, ApiClient.body(200), "till-1/receipt-full");

        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(201);
        accepted.add(purchaseId(retried));
        stored.addAll(broker.take(purchaseShard));
        counted.addAll(broker.take(storeShard));
        assertThat(stored).as("every accepted purchase stored once").extracting(Purchase::purchaseId)
                .containsExactlyElementsOf(accepted);
        assertThat(counted).as("the refused publish and the retry: one purchase id, the same items")
                .filteredOn(p -> p.purchaseId().equals(purchaseId(retried))).hasSize(2)
                .extracting(Purchase::items).containsOnly(tookTheRefused.getFirst().items());
        Map<UUID, Purchase> countedOnce = counted.stream()
                .collect(Collectors.toMap(Purchase::purchaseId, Function.identity(), (first, again) -> first));
        assertThat(countedOnce.keySet()).as("every accepted purchase counted once, by its id")
                .containsExactlyInAnyOrderElementsOf(accepted);
    }

    private static UUID purchaseId(HttpResponse<String> response) {
        return UUID.fromString(response.body().replaceAll(".*\"purchaseId\":\"([^\"]+)\".*", "$1"));
    }
}
