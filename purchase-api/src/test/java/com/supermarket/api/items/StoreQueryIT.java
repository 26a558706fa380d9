package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.contract.testing.TestBroker;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
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
 * {@link Topology#STORE_RPC_QUEUE} that answers as store-service does, or stays silent.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"platform.rpc.reply-timeout=1s", "platform.rpc.request-expiry=600ms",
                // A small publishing pool: a GET burst on a shared pool would exhaust it.
                "spring.rabbitmq.cache.channel.size=4", "spring.rabbitmq.cache.channel.checkout-timeout=200ms",
                "logging.structured.format.console="})
@DirtiesContext
class StoreQueryIT extends ServedApiTest {

    private static final int SILENT_STORE = 666;
    private static final int NO_STATUS_STORE = 77;
    private static final int UNKNOWN_STATUS_STORE = 78;
    private static final TestBroker broker = TestBroker.create("api-rpc");
    private static final BlockingQueue<Delivery> requests = new LinkedBlockingQueue<>();
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
            StoreQuery query = WireFormat.decode(delivery.getBody(), StoreQuery.class);
            byte[] reply = switch (query.id()) {
                case NO_STATUS_STORE -> "{\"entries\":[]}".getBytes();
                case UNKNOWN_STATUS_STORE -> "{\"status\":\"MAYBE\",\"entries\":[]}".getBytes();
                default -> {
                    StoreQueryReply answer = answer(query);
                    yield answer == null ? null : WireFormat.encode(answer);
                }
            };
            if (reply != null) {
                AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                        .correlationId(delivery.getProperties().getCorrelationId())
                        .contentType(WireFormat.CONTENT_TYPE).build();
                channel.basicPublish("", delivery.getProperties().getReplyTo(), properties, reply);
            }
        }, tag -> { });
    }

    private static StoreQueryReply answer(StoreQuery query) {
        if (query.kind() == Kind.TOP_ITEMS_AT_STORE) {
            return switch (query.id()) {
                case 7 -> StoreQueryReply.ok(List.of(new Ranked(101, 42), new Ranked(5, 3)));
                case 13 -> StoreQueryReply.notFound("store 13 has no data");
                case SILENT_STORE -> null;
                default -> StoreQueryReply.ok(List.of());
            };
        }
        return StoreQueryReply.ok(List.of(new Ranked(7, 42), new Ranked(3, 1)).subList(0, Math.min(2, query.limit())));
    }

    @AfterAll
    static void tearDown() throws IOException {
        responderConnection.close();
        broker.close();
    }

    @BeforeEach
    void forgetRequests() {
        requests.clear();
    }

    @Test
    void answersTheTopItemsOfAStoreFromTheReply() throws Exception {
        HttpResponse<String> response = api.get("/items/store/7");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"stores\":[{\"itemID\":101,\"numberOfItems\":42},{\"itemID\":5,\"numberOfItems\":3}]}");
        Delivery request = requests.take();
        assertThat(WireFormat.decode(request.getBody(), StoreQuery.class)).isEqualTo(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 7, 10));
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
        assertThat(WireFormat.decode(requests.take().getBody(), StoreQuery.class))
                .isEqualTo(new StoreQuery(Kind.TOP_STORES_FOR_ITEM, 9, 1));
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
            await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() >= 20);

            HttpResponse<String> purchase = api.postPurchase(3, ApiClient.body(3));

            assertThat(purchase.statusCode()).as(purchase.body()).isEqualTo(201);
            assertThat(gets).as("GETs still waiting while the purchase was accepted").anyMatch(get -> !get.isDone());
        }
        assertThat(gets).allSatisfy(get -> assertThat(get.get().statusCode()).isEqualTo(504));
        // The management API lists connections a few seconds late.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                new String(broker.management().send("GET", "api/vhosts/" + broker.vhost() + "/connections", null)))
                .contains("purchase-api store queries"));
    }
}
