package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The GET queries against a test responder on the real broker: a plain AMQP consumer on
 * {@link Topology#STORE_RPC_QUEUE} that answers batches of queries as store-service does, late,
 * or not at all.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"api.store-query.reply-timeout=1s", "api.store-query.request-expiry=600ms",
                // A small publishing pool: a GET burst on a shared pool would exhaust it.
                "spring.rabbitmq.cache.channel.size=4", "spring.rabbitmq.cache.channel.checkout-timeout=200ms",
                "logging.structured.format.console="})
@DirtiesContext
class StoreQueryIT extends ServedApiTest {

    private static final int SILENT_STORE = 666;
    private static final int NO_STATUS_STORE = 77;
    private static final int UNKNOWN_STATUS_STORE = 78;
    private static final TestBroker broker = TestBroker.create("api-rpc");
    /** Stores whose queries the responder answers only after {@link #SLOW_REPLY}, keeping a lane busy. */
    private static final int SLOW_STORE = 555;
    private static final Duration SLOW_REPLY = Duration.ofMillis(500);
    private static final BlockingQueue<Delivery> requests = new LinkedBlockingQueue<>();
    private static final AtomicInteger queriesReceived = new AtomicInteger();
    private static final ScheduledExecutorService delayedReplies = Executors.newSingleThreadScheduledExecutor();
    private static Connection responderConnection;

    static {
        broker.applyTopology(1);
    }

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @BeforeAll
    static void startResponder() throws IOException {
        responderConnection = broker.newConnection();
        Channel channel = responderConnection.createChannel();
        channel.basicConsume(Topology.STORE_RPC_QUEUE, true, (tag, delivery) -> {
            requests.add(delivery);
            List<StoreQuery> queries = WireFormat.decode(delivery.getBody(), StoreQueries.class).queries();
            queriesReceived.addAndGet(queries.size());
            if (queries.stream().anyMatch(query -> query.id() == SILENT_STORE)) {
                return;
            }
            List<String> replies = new ArrayList<>();
            for (StoreQuery query : queries) {
                replies.add(switch (query.id()) {
                    case NO_STATUS_STORE -> "{\"entries\":[]}";
                    case UNKNOWN_STATUS_STORE -> "{\"status\":\"MAYBE\",\"entries\":[]}";
                    default -> new String(WireFormat.encode(answer(query)), StandardCharsets.UTF_8);
                });
            }
            byte[] reply = ("{\"replies\":[" + String.join(",", replies) + "]}").getBytes(StandardCharsets.UTF_8);
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                    .correlationId(delivery.getProperties().getCorrelationId())
                    .contentType(WireFormat.CONTENT_TYPE).build();
            boolean slow = queries.stream().anyMatch(query -> query.id() == SLOW_STORE);
            // Every reply from the one scheduler thread: a channel takes one publisher at a time.
            delayedReplies.schedule(() -> {
                channel.basicPublish("", delivery.getProperties().getReplyTo(), properties, reply);
                return null;
            }, slow ? SLOW_REPLY.toMillis() : 0, TimeUnit.MILLISECONDS);
        }, tag -> { });
    }

    private static StoreQueryReply answer(StoreQuery query) {
        if (query.kind() == Kind.TOP_ITEMS_AT_STORE) {
            return switch (query.id()) {
                case 7 -> StoreQueryReply.ok(List.of(new Ranked(101, 42), new Ranked(5, 3)));
                case 13 -> StoreQueryReply.notFound("store 13 has no data");
                default -> query.id() >= 100 ? StoreQueryReply.ok(List.of(new Ranked(query.id(), query.id())))
                        : StoreQueryReply.ok(List.of());
            };
        }
        return StoreQueryReply.ok(List.of(new Ranked(7, 42), new Ranked(3, 1)).subList(0, Math.min(2, query.limit())));
    }

    @AfterAll
    static void tearDown() throws IOException {
        responderConnection.close();
        delayedReplies.shutdownNow();
        broker.close();
    }

    @BeforeEach
    void forgetRequests() {
        requests.clear();
        queriesReceived.set(0);
    }

    @Test
    void answersTheTopItemsOfAStoreFromTheReply() throws Exception {
        HttpResponse<String> response = api.get("/items/store/7");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"stores\":[{\"itemID\":101,\"numberOfItems\":42},{\"itemID\":5,\"numberOfItems\":3}]}");
        Delivery request = requests.take();
        assertThat(WireFormat.decode(request.getBody(), StoreQueries.class).queries())
                .containsExactly(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 7, 10));
        assertThat(request.getProperties().getType()).isEqualTo(StoreQueries.MESSAGE_TYPE);
        assertThat(request.getProperties().getContentType()).isEqualTo("application/json");
        // Expires on the queue before the client gives up (reply timeout 1000 ms).
        assertThat(request.getProperties().getExpiration()).isEqualTo("600");
        assertThat(request.getProperties().getReplyTo()).startsWith("amq.rabbitmq.reply-to");
        assertThat(request.getProperties().getHeaders() == null ? java.util.Map.of() : request.getProperties().getHeaders())
                .doesNotContainKey("__TypeId__");
    }

    @Test
    void answersTheTopStoresOfAnItemOnTheAliasWithTheRequestedLimit() throws Exception {
        HttpResponse<String> response = api.get("/items/top5/9?limit=1");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"stores\":[{\"storeID\":7,\"numberOfItems\":42}]}");
        assertThat(WireFormat.decode(requests.take().getBody(), StoreQueries.class).queries())
                .containsExactly(new StoreQuery(Kind.TOP_STORES_FOR_ITEM, 9, 1));
    }

    @Test
    void aKnownStoreWithoutSalesIsAnEmptyList() {
        HttpResponse<String> response = api.get("/items/store/8");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"stores\":[]}");
    }

    @Test
    void mapsNotFoundTo404() {
        HttpResponse<String> response = api.get("/items/store/13");

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.body()).isEqualTo("{\"message\":\"store 13 has no data\"}");
    }

    @Test
    void noReplyInTimeIs504() {
        HttpResponse<String> response = api.get("/items/store/" + SILENT_STORE);

        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(response.body()).contains("store-service did not answer within 1000 ms");
        assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
    }

    @ParameterizedTest
    @ValueSource(ints = {NO_STATUS_STORE, UNKNOWN_STATUS_STORE})
    void aReplyWithoutAKnownStatusIsACleanBadGateway(int store) {
        HttpResponse<String> response = api.get("/items/store/" + store);

        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(response.body()).startsWith("{\"message\":\"store-service sent a");
    }

    /**
     * While both lanes await slow replies, the GETs that arrive gather and leave together in
     * one or two messages, and each gets the answer to its own query.
     */
    @Test
    void queriesArrivingWhileTheLanesWaitLeaveTogetherEachWithItsOwnAnswer() throws Exception {
        List<Future<HttpResponse<String>>> slow = new ArrayList<>();
        Map<Integer, Future<HttpResponse<String>>> gathered = new HashMap<>();
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int lane = 1; lane <= 2; lane++) {
                slow.add(clients.submit(() -> api.get("/items/store/" + SLOW_STORE)));
                int sent = lane;
                await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() >= sent);
            }
            for (int store = 100; store < 120; store++) {
                int asked = store;
                gathered.put(store, clients.submit(() -> api.get("/items/store/" + asked)));
            }
        }

        assertThat(slow).allSatisfy(get -> assertThat(get.get().statusCode()).isEqualTo(200));
        for (Map.Entry<Integer, Future<HttpResponse<String>>> get : gathered.entrySet()) {
            assertThat(get.getValue().get().body()).as("store %d", get.getKey())
                    .isEqualTo("{\"stores\":[{\"itemID\":" + get.getKey() + ",\"numberOfItems\":" + get.getKey() + "}]}");
        }
        assertThat(queriesReceived).hasValue(22);
        assertThat(requests).as("messages for 2 slow and 20 gathered queries").hasSizeLessThanOrEqualTo(4);
    }

    /**
     * A query waits at most the reply timeout (1 s here) from its own arrival, also when it first
     * waits for a lane: behind two lanes that await a silent store-service, it would otherwise
     * wait ~1 s for a lane and 1 s more for its own reply.
     */
    @Test
    void aQueryWaitingForALaneTimesOutFromItsOwnArrival() throws Exception {
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int lane = 1; lane <= 2; lane++) {
                clients.submit(() -> api.get("/items/store/" + SILENT_STORE));
                int sent = lane;
                await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() >= sent);
            }
            long start = System.nanoTime();

            HttpResponse<String> queued = api.get("/items/store/" + SILENT_STORE);

            assertThat(queued.statusCode()).isEqualTo(504);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1500));
        }
    }

    /**
     * Store queries have their own connection: a burst of GETs that all wait for a silent
     * store-service, more than the publishing pool has channels, refuses no purchase.
     */
    @Test
    void aBurstOfWaitingGetsNeitherRefusesNorBlocksPurchases() throws Exception {
        List<Future<HttpResponse<String>>> gets = new ArrayList<>();
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 40; i++) {
                gets.add(clients.submit(() -> api.get("/items/store/" + SILENT_STORE)));
            }
            // Both lanes wait for the silent store-service; the other GETs wait for a lane.
            await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() >= 2);

            HttpResponse<String> purchase = api.postPurchase(3, ApiClient.body(3));

            assertThat(purchase.statusCode()).as(purchase.body()).isEqualTo(201);
            assertThat(gets).as("GETs still waiting while the purchase was accepted").anyMatch(get -> !get.isDone());
        }
        assertThat(gets).allSatisfy(get -> assertThat(get.get().statusCode()).isEqualTo(504));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(TestServices.connectionChannels(broker.vhost()))
                .containsKey("purchase-api store queries"));
    }
}
