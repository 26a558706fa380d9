package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.StoreQueryReply.Status;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * store-service on the real RabbitMQ, in a throw-away vhost: purchases published to the ingress
 * exchange as purchase-api publishes them, queries sent as purchase-api sends them.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class StoreServiceIT {

    private static final int SHARDS = 3;
    private static final TestBroker BROKER = TestBroker.create("store-service");

    private static Connection connection;
    private static RpcClient rpc;

    /** Actuator listens on a management port of its own (MANAGEMENT_PORT; random in this test). */
    @LocalManagementPort
    int managementPort;

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        BROKER.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("platform.broker.shards-per-node", () -> SHARDS);
        registry.add("store.ingest.consumers-per-shard", () -> 2);
        // 2 consumers x prefetch 10 x 50 purchases fit the 1,024-id dedup window.
        registry.add("store.ingest.max-purchases-per-message", () -> 50);
        registry.add("store.query.rpc-consumers", () -> 3);
        registry.add("platform.broker.discovery-interval", () -> "500ms");
    }

    @TestConfiguration
    static class DeleteVhostAtShutdown {
        /** Closed with the context, after the consumers have stopped. */
        @Bean(destroyMethod = "close")
        TestBroker testBroker() {
            return BROKER;
        }
    }

    @BeforeAll
    static void connect() throws Exception {
        connection = BROKER.newConnection();
        rpc = new RpcClient(connection);
    }

    @AfterAll
    static void disconnect() throws Exception {
        rpc.close();
        connection.close();
    }

    @Test
    void consumesEveryShardQueueByNameAndTheRpcQueueConcurrently() {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(consumersOf(Topology.STORE_RPC_QUEUE)).as("RPC consumers").isEqualTo(3);
            List<String> shards = BROKER.shardQueues(Topology.STORE_EXCHANGE);
            assertThat(shards).hasSizeGreaterThanOrEqualTo(SHARDS);
            for (String shard : shards) {
                assertThat(consumersOf(shard)).as(shard).isEqualTo(2);
            }
        });
    }

    @Test
    void consumesShardsAddedLater() {
        await().atMost(Duration.ofSeconds(30)).until(() -> BROKER.shardQueues(Topology.STORE_EXCHANGE).size() == SHARDS);

        BrokerTopology.applyPolicies(BROKER.management(), BROKER.vhost(), BROKER.settings(SHARDS + 1, Duration.ofSeconds(1)));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<String> shards = BROKER.shardQueues(Topology.STORE_EXCHANGE);
            assertThat(shards).hasSize(SHARDS + 1);
            for (String shard : shards) {
                assertThat(consumersOf(shard)).as(shard).isEqualTo(2);
            }
        });
    }

    @Test
    void rankingsReflectExactlyWhatWasPurchased() throws Exception {
        // Stores 101..110 are used by this test only.
        publish(purchase(101, new PurchaseItem(7, 5), new PurchaseItem(8, 3)));
        publish(purchase(101, new PurchaseItem(9, 3), new PurchaseItem(10, 1)));
        publish(purchase(102, new PurchaseItem(7, 2)));
        publish(purchase(103, new PurchaseItem(7, 5)));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 101, 10)).isEqualTo(StoreQueryReply.ok(List.of(
                    new Ranked(7, 5), new Ranked(8, 3), new Ranked(9, 3), new Ranked(10, 1))));
            // Item 7 is also sold by the random purchases below, but only at stores 1..100.
            assertThat(rpc.query(Kind.TOP_STORES_FOR_ITEM, 7, 5).entries()).filteredOn(r -> r.id() > 100)
                    .containsExactly(new Ranked(101, 5), new Ranked(103, 5), new Ranked(102, 2));
        });
        assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 101, 2).entries())
                .containsExactly(new Ranked(7, 5), new Ranked(8, 3));
        assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 104, 10)).as("a known store without sales")
                .isEqualTo(StoreQueryReply.ok(List.of()));
    }

    @Test
    void rankingsOfManyRandomPurchasesMatchAnOracle() throws Exception {
        Random random = new Random(5);
        Map<Integer, Map<Integer, Long>> sold = new HashMap<>();
        List<Purchase> purchases = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            int store = 1 + random.nextInt(20);
            List<PurchaseItem> items = new ArrayList<>();
            for (int line = 1 + random.nextInt(5); line > 0; line--) {
                int item = 1000 + random.nextInt(40);
                items.add(new PurchaseItem(item, 1 + random.nextInt(2)));
                sold.computeIfAbsent(store, s -> new HashMap<>()).merge(item, (long) items.getLast().quantity(), Long::sum);
            }
            purchases.add(purchase(store, items.toArray(PurchaseItem[]::new)));
        }
        purchases.forEach(StoreServiceIT::publish);

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            for (int store = 1; store <= 20; store++) {
                assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, store, 10).entries()).as("store %d", store)
                        .isEqualTo(top(sold.getOrDefault(store, Map.of()), 10));
            }
        });
        for (int item = 1000; item < 1040; item++) {
            Map<Integer, Long> byStore = new HashMap<>();
            for (var entry : sold.entrySet()) {
                Long quantity = entry.getValue().get(item);
                if (quantity != null) {
                    byStore.put(entry.getKey(), quantity);
                }
            }
            assertThat(rpc.query(Kind.TOP_STORES_FOR_ITEM, item, 5).entries()).as("item %d", item)
                    .isEqualTo(top(byStore, 5));
        }
    }

    @Test
    void thePurchasePublishedTwiceIsCountedOnce() throws Exception {
        Purchase purchase = purchase(105, new PurchaseItem(42, 3));
        publish(purchase);
        publish(purchase);
        publish(purchase(105, new PurchaseItem(43, 1)));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 105, 10).entries())
                        .containsExactly(new Ranked(42, 3), new Ranked(43, 1)));
        assertThat(metric("store_purchases_duplicates_total")).isGreaterThanOrEqualTo(1);
    }

    /**
     * A till that retries under its Idempotency-Key after a lost answer re-sends the same purchase
     * id, possibly after many other purchases of its store (a store offline for minutes flushing
     * its queue): within the dedup horizon it is still counted once.
     */
    @Test
    void aRetryAfterMoreThanAThousandOtherPurchasesOfItsStoreIsCountedOnce() throws Exception {
        Purchase retried = purchase(111, new PurchaseItem(50, 3));
        publish(retried);
        int others = 1_100;
        for (int sent = 0; sent < others; sent += 50) {
            List<byte[]> batch = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                batch.add(WireFormat.encode(purchase(111, new PurchaseItem(51, 1))));
            }
            publishRaw("111", PurchaseBatch.frame(batch), UUID.randomUUID().toString(), PurchaseBatch.MESSAGE_TYPE);
        }
        publish(retried);
        publish(purchase(111, new PurchaseItem(52, 1)));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 111, 10).entries())
                        .containsExactly(new Ranked(51, others), new Ranked(50, 3), new Ranked(52, 1)));
        assertThat(metric("store_dedup_forgotten_early_total")).isZero();
    }

    @Test
    void poisonPurchasesAreParkedAndConsumptionGoesOn() throws Exception {
        long parkedBefore = BROKER.messageCount(Topology.PARKING_QUEUE);
        publishRaw("106", "{not json".getBytes(StandardCharsets.UTF_8));
        publish(purchase(106, new PurchaseItem(200_000, 1)));
        publish(purchase(106, new PurchaseItem(1, 1)));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(BROKER.messageCount(Topology.PARKING_QUEUE)).isEqualTo(parkedBefore + 2));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 106, 10).entries()).containsExactly(new Ranked(1, 1)));
    }

    @Test
    void aBatchCountsEachGoodPurchaseAndParksEachPoisonElementAlone() throws Exception {
        long parkedBefore = BROKER.messageCount(Topology.PARKING_QUEUE);
        Purchase good = purchase(107, new PurchaseItem(5, 2));
        byte[] batch = PurchaseBatch.frame(List.of(
                WireFormat.encode(good),
                "{\"purchaseId\":\"not-a-uuid\"}".getBytes(StandardCharsets.UTF_8),
                WireFormat.encode(purchase(107, new PurchaseItem(100_001, 1))),
                WireFormat.encode(purchase(107, new PurchaseItem(6, 1)))));
        publishRaw("107", batch, UUID.randomUUID().toString(), PurchaseBatch.MESSAGE_TYPE);
        // Redelivered or republished: the same purchases counted once, the poison parked again.
        publishRaw("107", batch, UUID.randomUUID().toString(), PurchaseBatch.MESSAGE_TYPE);
        // A batch that cannot be read at all is rejected whole; the dead-letter policy parks it.
        publishRaw("107", "{\"version\":1,\"purch".getBytes(StandardCharsets.UTF_8), UUID.randomUUID().toString(),
                PurchaseBatch.MESSAGE_TYPE);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 107, 10).entries())
                        .containsExactly(new Ranked(5, 2), new Ranked(6, 1)));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(BROKER.messageCount(Topology.PARKING_QUEUE)).isEqualTo(parkedBefore + 5));
    }

    @Test
    void badQueriesGetErrorRepliesWithoutTypeHeaders() throws Exception {
        RpcClient.Reply malformed = rpc.call("{\"queries\":[{\"kind\":\"NOPE\"}]}".getBytes(StandardCharsets.UTF_8),
                StoreQueries.MESSAGE_TYPE);
        assertThat(WireFormat.decode(malformed.body(), StoreQueries.Replies.class).replies())
                .singleElement().extracting(StoreQueryReply::status).isEqualTo(Status.BAD_REQUEST);
        assertThat(malformed.properties().getContentType()).isEqualTo(WireFormat.CONTENT_TYPE);
        assertThat(malformed.properties().getHeaders()).doesNotContainKey("__TypeId__");

        assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 1, 0).status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 1025, 10).status()).isEqualTo(Status.NOT_FOUND);
        assertThat(rpc.query(Kind.TOP_STORES_FOR_ITEM, 100_001, 5).status()).isEqualTo(Status.NOT_FOUND);
        assertThat(rpc.query(Kind.TOP_STORES_FOR_ITEM, 100_000, 5)).isEqualTo(StoreQueryReply.ok(List.of()));
    }

    @Test
    void aBatchOfQueriesGetsOneReplyPerQueryInItsOrder() throws Exception {
        List<StoreQuery> queries = List.of(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 1, 0),
                new StoreQuery(Kind.TOP_STORES_FOR_ITEM, 100_000, 5), new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 1025, 10),
                new StoreQuery(Kind.TOP_STORES_FOR_ITEM, 100_001, 5));

        assertThat(rpc.queries(queries)).extracting(StoreQueryReply::status)
                .containsExactly(Status.BAD_REQUEST, Status.OK, Status.NOT_FOUND, Status.NOT_FOUND);

        RpcClient.Reply malformed = rpc.call("{\"queries\":[]}".getBytes(StandardCharsets.UTF_8), StoreQueries.MESSAGE_TYPE);
        assertThat(WireFormat.decode(malformed.body(), StoreQueries.Replies.class).replies())
                .singleElement().extracting(StoreQueryReply::status).isEqualTo(Status.BAD_REQUEST);
    }

    @Test
    void readinessIncludesTheBrokerAndTheShardConsumers() {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode readiness = WireFormat.mapper().readTree(get("/actuator/health/readiness"));
            assertThat(readiness.get("status").asString()).isEqualTo("UP");
        });
        assertThat(get("/actuator/health/readiness")).contains("rabbit", "shardConsumers");
        assertThat(get("/actuator/health/liveness")).contains("UP");
        assertThat(get("/actuator/prometheus")).contains("store_purchases_applied_total", "store_shards_consumed");
    }

    private static Purchase purchase(int store, PurchaseItem... items) {
        return new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1), List.of(items),
                Instant.now());
    }

    /** As purchase-api publishes: to the ingress exchange, routing key = store, persistent, confirmed. */
    private static void publish(Purchase purchase) {
        publishRaw(Integer.toString(purchase.storeId()), PurchaseBatch.frame(List.of(WireFormat.encode(purchase))),
                purchase.purchaseId().toString(), PurchaseBatch.MESSAGE_TYPE);
    }

    private static void publishRaw(String routingKey, byte[] body) {
        publishRaw(routingKey, body, UUID.randomUUID().toString());
    }

    private static void publishRaw(String routingKey, byte[] body, String messageId) {
        publishRaw(routingKey, body, messageId, null);
    }

    private static void publishRaw(String routingKey, byte[] body, String messageId, String type) {
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.basicPublish(Topology.INGRESS_EXCHANGE, routingKey, true, new AMQP.BasicProperties.Builder()
                    .contentType(WireFormat.CONTENT_TYPE).messageId(messageId).type(type).deliveryMode(2).build(), body);
            channel.waitForConfirmsOrDie(10_000);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Ranked> top(Map<Integer, Long> quantities, int limit) {
        return quantities.entrySet().stream()
                .map(entry -> new Ranked(entry.getKey(), entry.getValue()))
                .sorted(Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id))
                .limit(limit)
                .toList();
    }

    private static long consumersOf(String queue) {
        return BROKER.consumerCount(queue);
    }

    private double metric(String name) {
        return get("/actuator/prometheus").lines().filter(line -> line.startsWith(name))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
    }

    private String get(String path) {
        try {
            HttpResponse<String> response = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://localhost:" + managementPort + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
