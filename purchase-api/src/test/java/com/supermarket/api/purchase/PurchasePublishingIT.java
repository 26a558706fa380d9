package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.Rabbitmqctl;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.ModulusHashKeys;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"api.publish.confirm-timeout=1s", "api.publish.batch.max-in-flight=1",
                "api.broker.health-timeout=1s", "logging.structured.format.console="})
@DirtiesContext
class PurchasePublishingIT extends ServedApiTest {

    /** Shard queues behind each sharded exchange (one node): the API routes over all of them. */
    private static final int SHARDS = 4;

    private static final TestBroker broker = TestBroker.create("api-publish");

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.applyTopology(SHARDS);
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @AfterAll
    static void deleteVhost() {
        broker.close();
    }

    private Map<String, Long> behindEachExchange() {
        Map<String, Long> counts = new HashMap<>();
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            counts.put(exchange, broker.messageCountBehind(exchange));
        }
        return counts;
    }

    /**
     * Takes every message out of the shard queues of {@code exchange}: purchase id -> its shard
     * queue. Each message's routing key is one of the shards' keys, and always lands on one queue.
     */
    private static Map<UUID, String> drainShards(String exchange, List<Integer> batchSizes) throws Exception {
        Map<UUID, String> shardById = new HashMap<>();
        Map<String, String> shardByKey = new HashMap<>();
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            for (String shard : broker.shardQueues(exchange)) {
                for (GetResponse get = channel.basicGet(shard, true); get != null; get = channel.basicGet(shard, true)) {
                    assertThat(get.getProps().getType()).isEqualTo(PurchaseBatch.MESSAGE_TYPE);
                    String key = get.getEnvelope().getRoutingKey();
                    assertThat(ModulusHashKeys.forQueues(SHARDS)).contains(key);
                    assertThat(shardByKey.computeIfAbsent(key, k -> shard)).as("the queue of key %s", key).isEqualTo(shard);
                    List<Purchase> purchases = PurchaseBatch.decode(get.getProps().getType(), get.getBody()).purchases();
                    batchSizes.add(purchases.size());
                    for (Purchase purchase : purchases) {
                        assertThat(shardById.put(purchase.purchaseId(), shard)).as("%s twice", purchase.purchaseId()).isNull();
                    }
                }
            }
        }
        return shardById;
    }

    @Test
    void concurrentPurchasesLeaveBatchesBehindEachShardedExchangeHoldingExactlyThePurchasesAnswered201() throws Exception {
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            drainShards(exchange, new ArrayList<>());
        }
        int n = 400;
        // Concurrent, as tills are: what gathers while a batch awaits its confirm leaves together.
        Map<UUID, Integer> storeById = new HashMap<>();
        List<Future<HttpResponse<String>>> responses = new ArrayList<>();
        try (ExecutorService tills = Executors.newFixedThreadPool(64, Thread.ofVirtual().factory())) {
            for (int i = 1; i <= n; i++) {
                int store = 1 + (i * 37) % 100;
                responses.add(tills.submit(() -> api.postPurchase(store, ApiClient.body(store, store + 1))));
            }
        }
        for (int i = 1; i <= n; i++) {
            HttpResponse<String> response = responses.get(i - 1).get();
            assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
            assertThat(response.body()).matches("\\{\"purchaseId\":\"[0-9a-f-]{36}\"}");
            storeById.put(UUID.fromString(response.body().replaceAll(".*\"purchaseId\":\"([^\"]+)\".*", "$1")),
                    1 + (i * 37) % 100);
        }
        assertThat(storeById).hasSize(n);

        for (String exchange : Topology.SHARDED_EXCHANGES) {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(broker.messageCountBehind(exchange))
                    .as("messages behind %s", exchange).isPositive());
            List<Integer> batchSizes = new ArrayList<>();
            Map<UUID, String> shardById = drainShards(exchange, batchSizes);
            assertThat(shardById.keySet()).as("purchases behind %s", exchange).isEqualTo(storeById.keySet());
            assertThat(batchSizes).as("purchases per message behind %s", exchange).anyMatch(size -> size > 1);
            assertThat(new HashSet<>(shardById.values())).as("shards of %s holding purchases", exchange)
                    .containsExactlyInAnyOrderElementsOf(broker.shardQueues(exchange)).hasSize(SHARDS);
        }
    }

    @Test
    void theMessageIsAPersistentPurchaseBatchRoutedToAShardQueue() throws Exception {
        HttpResponse<String> response = api.postPurchase(5, ApiClient.body(101, 102));
        assertThat(response.statusCode()).isEqualTo(201);
        UUID purchaseId = UUID.fromString(response.body().replaceAll(".*\"purchaseId\":\"([^\"]+)\".*", "$1"));

        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            GetResponse found = null;
            Purchase purchase = null;
            for (String shard : broker.shardQueues(Topology.STORE_EXCHANGE)) {
                for (GetResponse get = channel.basicGet(shard, false); get != null && found == null; get = channel.basicGet(shard, false)) {
                    for (Purchase candidate : PurchaseBatch.decode(get.getProps().getType(), get.getBody()).purchases()) {
                        if (candidate.purchaseId().equals(purchaseId)) {
                            found = get;
                            purchase = candidate;
                        }
                    }
                }
            }
            assertThat(found).as("message with %s in a storeX shard", purchaseId).isNotNull();
            assertThat(found.getProps().getDeliveryMode()).isEqualTo(2);
            assertThat(found.getProps().getContentType()).isEqualTo("application/json");
            assertThat(found.getProps().getType()).isEqualTo(PurchaseBatch.MESSAGE_TYPE);
            assertThat(ModulusHashKeys.forQueues(SHARDS)).contains(found.getEnvelope().getRoutingKey());
            assertThat(purchase.storeId()).isEqualTo(5);
            assertThat(purchase.customerId()).isEqualTo(5001);
        }
    }

    @Test
    void aFormContentTypeDoesNotSwallowTheBody() {
        HttpResponse<String> response = api.post("/purchase/3/customer/3000/date/20210101", ApiClient.body(1),
                "application/x-www-form-urlencoded");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    }

    @Test
    void aBadRequestPublishesNothing() {
        Map<String, Long> before = behindEachExchange();

        HttpResponse<String> response = api.postPurchase(3, "{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":0}]}");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("\"message\":\"items[0].numberOfItems must be a positive integer, not 0\"");
        assertThat(behindEachExchange()).isEqualTo(before);
    }

    @Test
    void aPathTomcatRejectsStillAnswersTheErrorBody() {
        HttpResponse<String> response = api.post("/purchase/%2F/customer/1/date/20210101", ApiClient.body(1), "application/json");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(response.body()).startsWith("{\"message\":\"Bad Request");
    }

    /**
     * Raises a real memory alarm on the shared test broker for a few seconds: every publishing
     * connection is blocked while it lasts. The previous watermark is restored in any case.
     */
    @Test
    void aBlockedConnectionAnswers503AndTakesReadinessDownUntilTheAlarmClears() {
        assertThat(api.postPurchase(1, ApiClient.body(1)).statusCode()).isEqualTo(201);
        List<String> watermark = Rabbitmqctl.memoryHighWatermark();
        try {
            Rabbitmqctl.setMemoryHighWatermark(List.of("0.000001"));
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
                HttpResponse<String> response = api.postPurchase(2, ApiClient.body(2));
                assertThat(response.statusCode()).isEqualTo(503);
                assertThat(response.body()).contains("blocking publishers");
                assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            });
            assertThat(api.actuator("/health/readiness").statusCode()).isEqualTo(503);
            assertThat(api.actuator("/health/liveness").statusCode()).isEqualTo(200);
        } finally {
            Rabbitmqctl.setMemoryHighWatermark(watermark);
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> api.postPurchase(3, ApiClient.body(3)).statusCode() == 201);
        await().atMost(Duration.ofSeconds(15)).until(() -> api.actuator("/health/readiness").statusCode() == 200);
    }

    @Test
    void servesMetricsAndTheOpenApiDescription() {
        assertThat(api.postPurchase(9, ApiClient.body(9)).statusCode()).isEqualTo(201);

        String metrics = api.actuator("/prometheus").body();
        assertThat(metrics).contains("api_purchases_accepted_total", "api_purchases_confirm_latency_seconds_bucket");
        HttpResponse<String> openApi = api.get("/openapi.yaml");
        assertThat(openApi.statusCode()).isEqualTo(200);
        assertThat(openApi.body()).contains("openapi: 3", "/purchase/{storeID}/customer/{custID}/date/{date}");
    }
}
