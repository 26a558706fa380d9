package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The GETs over two store partitions, on the real broker: a test responder per partition, a
 * plain AMQP consumer on the partition's query queue answering from the partition's share of one
 * table of counts as store-service does (and refusing a store it does not own). A store's top
 * items come from its owner; an item's top stores, and the chain's top items, are the brute-force
 * ranking over every store;
 * a partition that stops answering, or whose queue is gone, fails the GETs that need it, naming
 * it, while the other partition's stores are still answered.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"api.store-query.reply-timeout=1s", "api.store-query.request-expiry=600ms", "platform.broker.store-partitions=2",
                "platform.max-stores=32", "platform.max-item-id=10", "logging.structured.format.console="})
@DirtiesContext
class StorePartitionQueriesIT extends ServedApiTest {

    private static final int PARTITIONS = 2;
    private static final int STORES = 32;
    private static final int ITEMS = 10;
    private static final TestBroker broker = TestBroker.create("api-partitions");
    /** Quantity sold of each item (key) at each store (index): the brute force every answer is checked against. */
    private static final List<Map<Integer, Long>> sold = new ArrayList<>();
    /** Which partition each query of a store's top items reached. */
    private static final Map<Integer, List<Integer>> askedOf = new ConcurrentHashMap<>();
    private static final List<Channel> responders = new ArrayList<>();
    private static Connection responderConnection;

    static {
        broker.applyTopology(2, PARTITIONS);
        Random random = new Random(2);
        for (int store = 0; store <= STORES; store++) {
            Map<Integer, Long> items = new ConcurrentHashMap<>();
            for (int item = 1; item <= ITEMS; item++) {
                if (store > 0 && random.nextInt(3) > 0) {
                    items.put(item, (long) random.nextInt(8));
                }
            }
            sold.add(items);
        }
    }

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @BeforeAll
    static void startPartitions() throws IOException {
        responderConnection = broker.newConnection();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            responders.add(respond(new StorePartition(partition, PARTITIONS)));
        }
    }

    @AfterAll
    static void tearDown() throws IOException {
        responderConnection.close();
        broker.close();
    }

    @BeforeEach
    void forget() {
        askedOf.clear();
    }

    private static Channel respond(StorePartition partition) throws IOException {
        Channel channel = responderConnection.createChannel();
        channel.queueDeclare(partition.queryQueue(), true, false, false, null);
        channel.basicConsume(partition.queryQueue(), true, (tag, delivery) -> {
            List<StoreQueryReply> replies = new ArrayList<>();
            for (StoreQuery query : WireFormat.decode(delivery.getBody(), StoreQueries.class).queries()) {
                if (query.kind() == Kind.TOP_ITEMS_AT_STORE) {
                    askedOf.computeIfAbsent(query.id(), store -> new ArrayList<>()).add(partition.index());
                }
                replies.add(answer(query, partition));
            }
            channel.basicPublish("", delivery.getProperties().getReplyTo(), new AMQP.BasicProperties.Builder()
                    .correlationId(delivery.getProperties().getCorrelationId()).contentType(WireFormat.CONTENT_TYPE).build(),
                    WireFormat.encode(new StoreQueries.Replies(replies)));
        }, tag -> { });
        return channel;
    }

    private static StoreQueryReply answer(StoreQuery query, StorePartition partition) {
        switch (query.kind()) {
            case TOP_ITEMS -> {
                return StoreQueryReply.ok(itemTotals(partition::owns).stream().limit(query.limit()).toList(), 1000L + partition.index());
            }
            case ITEMS_SOLD_AT_LEAST -> {
                return StoreQueryReply.ok(itemTotals(partition::owns).stream().filter(item -> item.quantity() >= query.atLeast()).toList());
            }
            case ITEM_TOTALS -> {
                Map<Integer, Long> totals = itemTotals(partition::owns).stream().collect(Collectors.toMap(Ranked::id, Ranked::quantity));
                return StoreQueryReply.ok(query.items().stream().map(item -> new Ranked(item, totals.getOrDefault(item, 0L))).toList());
            }
            default -> {
                // the public rankings, below
            }
        }
        if (query.kind() == Kind.TOP_ITEMS_AT_STORE) {
            if (!partition.owns(query.id())) {
                return StoreQueryReply.badRequest("store " + query.id() + " is not counted by " + partition);
            }
            return StoreQueryReply.ok(sold.get(query.id()).entrySet().stream().filter(item -> item.getValue() > 0)
                    .map(item -> new Ranked(item.getKey(), item.getValue()))
                    .sorted(mostFirst()).limit(query.limit()).toList());
        }
        return StoreQueryReply.ok(topStores(query.id(), query.limit(), partition::owns));
    }

    private static List<Ranked> topStores(int item, int limit, java.util.function.IntPredicate stores) {
        List<Ranked> ranked = new ArrayList<>();
        for (int store = 1; store <= STORES; store++) {
            long quantity = sold.get(store).getOrDefault(item, 0L);
            if (stores.test(store) && quantity > 0) {
                ranked.add(new Ranked(store, quantity));
            }
        }
        return ranked.stream().sorted(mostFirst()).limit(limit).toList();
    }

    /** Every item the stores sold, over them all, most first. */
    private static List<Ranked> itemTotals(java.util.function.IntPredicate stores) {
        Map<Integer, Long> totals = new java.util.HashMap<>();
        for (int store = 1; store <= STORES; store++) {
            if (stores.test(store)) {
                sold.get(store).forEach((item, quantity) -> totals.merge(item, quantity, Long::sum));
            }
        }
        return totals.entrySet().stream().filter(item -> item.getValue() > 0).map(item -> new Ranked(item.getKey(), item.getValue()))
                .sorted(mostFirst()).toList();
    }

    private static Comparator<Ranked> mostFirst() {
        return Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id);
    }

    @Test
    void isReadyWithOnlyThePartitionsQueryQueues() {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> readiness = api.actuator("/health/readiness");
            assertThat(readiness.statusCode()).as(readiness.body()).isEqualTo(200);
        });
    }

    @Test
    void aStoresTopItemsAreAskedOfItsOwnerOnly() {
        for (int store = 1; store <= STORES; store++) {
            HttpResponse<String> response = api.get("/items/store/" + store);

            assertThat(response.statusCode()).as("store %d: %s", store, response.body()).isEqualTo(200);
            assertThat(askedOf.get(store)).as("partitions asked for store %d", store)
                    .containsExactly(StorePartition.ownerOf(store, PARTITIONS));
        }
    }

    @Test
    void anItemsTopStoresAreTheBruteForceRankingOverEveryPartition() {
        for (int item = 1; item <= ITEMS; item++) {
            for (int limit : new int[] {1, 5, STORES}) {
                String expected = topStores(item, limit, store -> true).stream()
                        .map(ranked -> "{\"storeID\":" + ranked.id() + ",\"numberOfItems\":" + ranked.quantity() + "}")
                        .collect(Collectors.joining(",", "{\"stores\":[", "]}"));

                HttpResponse<String> response = api.get("/items/top10/" + item + "?limit=" + limit);

                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body()).as("item %d, limit %d", item, limit).isEqualTo(expected);
            }
        }
    }

    @Test
    void theChainsTopItemsAreTheBruteForceRankingOverEveryPartition() {
        for (int limit : new int[] {1, 3, ITEMS, 1000}) {
            String expected = itemTotals(store -> true).stream().limit(limit)
                    .map(ranked -> "{\"itemID\":" + ranked.id() + ",\"numberOfItems\":" + ranked.quantity() + "}")
                    .collect(Collectors.joining(",", "{\"items\":[", "],\"purchases\":2001}"));

            HttpResponse<String> response = api.get("/items/top?limit=" + limit);

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).as("limit %d", limit).isEqualTo(expected);
        }
    }

    @Test
    void aSilentPartitionFailsTheGetsThatNeedItNamingItAndOnlyThose() throws Exception {
        Channel partitionOne = responders.get(1);
        partitionOne.close();
        try {
            HttpResponse<String> top = api.get("/items/top5/3");
            HttpResponse<String> oddStore = api.get("/items/store/7");
            HttpResponse<String> evenStore = api.get("/items/store/8");
            HttpResponse<String> chain = api.get("/items/top");

            assertThat(chain.statusCode()).isEqualTo(504);
            assertThat(chain.body()).contains("did not answer", "within 1000 ms");
            assertThat(top.statusCode()).isEqualTo(504);
            assertThat(top.body()).contains("store-service partition 1 of 2 (queue store.queries.p1) did not answer within 1000 ms");
            assertThat(oddStore.statusCode()).isEqualTo(504);
            assertThat(oddStore.body()).contains("partition 1 of 2");
            assertThat(evenStore.statusCode()).isEqualTo(200);
        } finally {
            responders.set(1, respond(new StorePartition(1, PARTITIONS)));
        }
    }

    @Test
    void aPartitionWithoutAQueryQueueFailsAtOnceNamingIt() throws Exception {
        Channel partitionOne = responders.get(1);
        partitionOne.close();
        try (Channel admin = responderConnection.createChannel()) {
            // purchase-api declares the topology, query queues included, in the background at its
            // start until that succeeds once: delete the queue again until no declaration follows.
            await("a GET answered 503 at once while partition 1's query queue is gone").atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> {
                        admin.queueDelete(Topology.storeQueryQueue(1, PARTITIONS));
                        long start = System.nanoTime();

                        HttpResponse<String> top = api.get("/items/top10/3");

                        assertThat(top.statusCode()).isEqualTo(503);
                        assertThat(top.body()).contains("store-service partition 1 of 2 (queue store.queries.p1) cannot be "
                                + "asked: its query queue does not exist");
                        assertThat(System.nanoTime() - start).as("returned, not timed out").isLessThan(1_000_000_000L);
                    });
            assertThat(api.get("/items/store/8").statusCode()).isEqualTo(200);
        } finally {
            responders.set(1, respond(new StorePartition(1, PARTITIONS)));
        }
    }
}
