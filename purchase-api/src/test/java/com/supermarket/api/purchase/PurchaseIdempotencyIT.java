package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.api.testing.ApiClient;
import com.supermarket.api.testing.ServedApiTest;
import com.supermarket.api.testing.TestRedis;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.tools.proxy.TcpProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The idempotency store on the real test Redis (database 5, keys under a prefix of this run,
 * deleted afterwards) and the real RabbitMQ (a throw-away vhost), with a {@link TcpProxy} on the
 * link to Redis to cut or freeze it ({@link TestRedis}: fails, never skips, when Redis cannot
 * be reached).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"api.idempotency.timeout=2s", "logging.structured.format.console="})
@DirtiesContext
class PurchaseIdempotencyIT extends ServedApiTest {

    private static final String KEY_PREFIX = "idem-test:" + UUID.randomUUID() + ":";

    private static final TestBroker broker = TestBroker.create("idem");
    private static final TcpProxy redisLink = TestRedis.link();
    private static final RedisClient redisClient = RedisClient.create(TestRedis.directUrl());
    private static final StatefulRedisConnection<String, String> redisConnection = redisClient.connect();
    private static final RedisCommands<String, String> redis = redisConnection.sync();

    @DynamicPropertySource
    static void services(DynamicPropertyRegistry registry) {
        broker.applyTopology(2);
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
        registry.add("api.idempotency.redis-url", () -> TestRedis.url(redisLink));
        registry.add("api.idempotency.key-prefix", () -> KEY_PREFIX);
    }

    @AfterAll
    static void cleanUp() {
        try {
            ScanIterator<String> keys = ScanIterator.scan(redis, ScanArgs.Builder.matches(KEY_PREFIX + "*").limit(1000));
            while (keys.hasNext()) {
                redis.del(keys.next());
            }
        } finally {
            redisConnection.close();
            redisClient.shutdown();
            redisLink.close();
            broker.close();
        }
    }

    @BeforeEach
    void drainPublished() throws Exception {
        drain(); // each test sees only what it published
    }

    @AfterEach
    void restoreTheLink() {
        redisLink.restore();
    }

    private static String body(int... itemIds) {
        return ApiClient.body(itemIds);
    }

    private static UUID purchaseId(HttpResponse<String> response) {
        return UUID.fromString(response.body().replaceAll(".*\"purchaseId\":\"([^\"]+)\".*", "$1"));
    }

    @Test
    void aReusedKeyIs201WithTheSameIdForTheSameBodyWithoutPublishingItAgainAnd422ForAnother() throws Exception {
        String key = "till-1/receipt-" + UUID.randomUUID();

        HttpResponse<String> first = api.postPurchase(7, body(101, 102), key);
        // The same purchase written differently: other key order, whitespace, a number for the id.
        HttpResponse<String> retry = api.postPurchase(7,
                "{ \"items\" : [ {\"numberOfItems:\":1, \"ItemID\":101}, {\"ItemID\":\"102\",\"numberOfItems\":\"1\"} ] }", key);
        HttpResponse<String> other = api.postPurchase(7, body(101, 103), key);
        HttpResponse<String> otherStore = api.postPurchase(8, body(101, 103), key);

        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
        assertThat(purchaseId(retry)).isEqualTo(purchaseId(first));
        assertThat(other.statusCode()).as(other.body()).isEqualTo(422);
        assertThat(other.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(other.body()).startsWith("{\"message\":\"the Idempotency-Key was already used for a different purchase");
        assertThat(otherStore.statusCode()).as("the key is scoped by store: " + otherStore.body()).isEqualTo(201);

        // The first was confirmed before the retry came: the retry is answered from the store, not
        // published again, so no consumer has to remember it however late it comes.
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            List<Purchase> behind = purchasesBehind(exchange);
            assertThat(behind).as("behind %s", exchange).hasSize(2);
            List<Purchase> underTheKey = behind.stream().filter(p -> p.purchaseId().equals(purchaseId(first))).toList();
            assertThat(underTheKey).as("the first alone, behind %s", exchange).hasSize(1)
                    .allSatisfy(p -> assertThat(p.items()).containsExactly(new PurchaseItem(101, 1), new PurchaseItem(102, 1)));
        }
        assertThat(api.actuator("/prometheus").body()).containsPattern("api_purchases_idempotency_replays_total(\\{[^}]*})? [1-9]");
        String redisKey = KEY_PREFIX + PurchaseRequestParser.keyId(7, key);
        assertThat(redis.get(redisKey)).as("the fingerprint, marked confirmed").matches("[0-9a-f]{32}\\+");
        assertThat(redis.pttl(redisKey)).isBetween(Duration.ofHours(23).toMillis(), Duration.ofHours(24).toMillis());
    }

    /**
     * Redis forgets a key (its TTL ran out, it was evicted or restarted, or no Redis is configured)
     * and a till reuses it for another purchase: that is a new purchase, with an id of its own, so
     * the consumers (which keep the first body of an id forever) store and count it; the first
     * purchase keeps its id and body.
     */
    @Test
    void aReusedKeyThatRedisForgotIsANewPurchaseWithItsOwnIdAndTheFirstIsUnchanged() throws Exception {
        String key = "till-2/receipt-" + UUID.randomUUID();
        HttpResponse<String> first = api.postPurchase(9, body(101, 102), key);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(redis.keys(KEY_PREFIX + "*")).as("the key's claim").isNotEmpty();
        redis.keys(KEY_PREFIX + "*").forEach(redis::del);

        HttpResponse<String> reused = api.postPurchase(9, body(105), key);
        HttpResponse<String> retried = api.postPurchase(9, body(105), key);

        assertThat(reused.statusCode()).as(reused.body()).isEqualTo(201);
        assertThat(purchaseId(reused)).isNotEqualTo(purchaseId(first));
        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(201);
        assertThat(purchaseId(retried)).as("a retry of the new purchase").isEqualTo(purchaseId(reused));
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            assertThat(purchasesBehind(exchange)).as("behind %s", exchange)
                    .extracting(Purchase::purchaseId, Purchase::items)
                    .containsExactlyInAnyOrder(
                            tuple(purchaseId(first), List.of(new PurchaseItem(101, 1), new PurchaseItem(102, 1))),
                            tuple(purchaseId(reused), List.of(new PurchaseItem(105, 1))));
        }
    }

    @Test
    void aCutLinkToRedisRefusesKeyedPurchasesWith503AndRecoversWhileUnkeyedOnesGoOn() throws Exception {
        assertThat(api.postPurchase(3, body(1), "k-" + UUID.randomUUID()).statusCode()).isEqualTo(201);

        redisLink.disconnect();
        HttpResponse<String> keyed = api.postPurchase(3, body(2), "k-" + UUID.randomUUID());
        HttpResponse<String> unkeyed = api.postPurchase(3, body(3));

        assertThat(keyed.statusCode()).as(keyed.body()).isEqualTo(503);
        assertThat(keyed.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(keyed.body()).contains("the idempotency store is unavailable", "was not accepted",
                "retry later with the same Idempotency-Key");
        assertThat(unkeyed.statusCode()).as(unkeyed.body()).isEqualTo(201);
        assertThat(api.actuator("/prometheus").body())
                .containsPattern("api_purchases_refused_total\\{[^}]*reason=\"IDEMPOTENCY_UNAVAILABLE\"[^}]*} [1-9]");

        redisLink.restore();
        await().atMost(Duration.ofSeconds(15))
                .until(() -> api.postPurchase(3, body(4), "k-" + UUID.randomUUID()).statusCode() == 201);
        assertThat(purchasesBehind(Topology.STORE_EXCHANGE)).extracting(p -> p.items().getFirst().itemId())
                .as("nothing of the refused purchase").doesNotContain(2).contains(1, 3, 4);
    }

    @Test
    void aFrozenLinkToRedisRefusesKeyedPurchasesWith503WithinTheTimeout() {
        assertThat(api.postPurchase(4, body(1), "k-" + UUID.randomUUID()).statusCode()).isEqualTo(201);

        redisLink.freeze();
        long start = System.nanoTime();
        HttpResponse<String> keyed = api.postPurchase(4, body(2), "k-" + UUID.randomUUID());
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(keyed.statusCode()).as(keyed.body()).isEqualTo(503);
        assertThat(keyed.body()).contains("Redis did not answer within 2000 ms");
        assertThat(took).isLessThan(Duration.ofSeconds(5));
        redisLink.restore();
        await().atMost(Duration.ofSeconds(15))
                .until(() -> api.postPurchase(4, body(3), "k-" + UUID.randomUUID()).statusCode() == 201);
    }

    /** One answer a client of {@link #whileTheLinkToRedisIsFrozenUnkeyedPurchasesGoOnAndKeyedOnesAre503WithinTheTimeout} got. */
    private record Answer(int client, boolean keyed, long startNanos, long endNanos, int status, String body) {

        Duration took() {
            return Duration.ofNanos(endNanos - startNanos);
        }

        boolean within(long fromNanos, long untilNanos) {
            return startNanos - fromNanos >= 0 && untilNanos - endNanos >= 0;
        }
    }

    /**
     * 200 tills, half of them keyed, post through the API while the link to Redis freezes (a
     * Redis that accepts bytes and never answers): the unkeyed purchases keep being accepted and
     * do not wait for the keyed ones' claims; the keyed ones are refused with 503 within two claim
     * timeouts (one waiting for a claim slot, one for their own claim); once the link is back, every keyed till, retrying with the same key, is accepted
     * within seconds; every accepted purchase is stored once and nothing of a refused one.
     */
    @Test
    void whileTheLinkToRedisIsFrozenUnkeyedPurchasesGoOnAndKeyedOnesAre503WithinTheTimeout() throws Exception {
        // Well above what a request takes under this load on a shared machine, so that a wait for a claim shows.
        Duration claimTimeout = Duration.ofSeconds(2);
        int clients = 200;
        Queue<Answer> answers = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> tills = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int client = c;
            boolean keyed = client % 2 == 0;
            int store = 1 + client % 20;
            tills.add(Thread.ofVirtual().start(() -> {
                String key = "k-" + UUID.randomUUID();
                while (!stop.get()) {
                    long start = System.nanoTime();
                    HttpResponse<String> response = keyed ? api.postPurchase(store, body(client + 1), key)
                            : api.postPurchase(store, body(client + 1));
                    answers.add(new Answer(client, keyed, start, System.nanoTime(), response.statusCode(), response.body()));
                    if (response.statusCode() == 201) {
                        key = "k-" + UUID.randomUUID(); // a refused one is retried with its key
                    }
                }
            }));
        }
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> answers.stream().filter(a -> a.status() == 201)
                    .map(Answer::client).distinct().count() == clients);

            long frozenAt = System.nanoTime();
            redisLink.freeze();
            await("each unkeyed till answered 3 times and 3 claim timeouts within the freeze")
                    .atMost(Duration.ofSeconds(60)).until(() -> {
                        long now = System.nanoTime();
                        return now - frozenAt > 3 * claimTimeout.toNanos() && answers.stream()
                                .filter(a -> !a.keyed() && a.within(frozenAt, now)).collect(Collectors.groupingBy(
                                        Answer::client, Collectors.counting())).values().stream()
                                .filter(n -> n >= 3).count() == clients / 2;
                    });
            long restoredAt = System.nanoTime();
            redisLink.restore();

            await("every keyed till accepted again after the freeze").atMost(Duration.ofSeconds(20))
                    .until(() -> answers.stream().filter(a -> a.keyed() && a.status() == 201 && a.startNanos() - restoredAt > 0)
                            .map(Answer::client).distinct().count() == clients / 2);
            stop.set(true);
            for (Thread till : tills) {
                till.join(Duration.ofSeconds(30));
            }

            List<Answer> duringFreeze = answers.stream().filter(a -> a.within(frozenAt, restoredAt)).toList();
            assertThat(answers).filteredOn(a -> !a.keyed()).as("unkeyed answers").isNotEmpty()
                    .allSatisfy(a -> assertThat(a.status()).as(a.body()).isEqualTo(201));
            Map<Integer, Long> slowUnkeyed = duringFreeze.stream()
                    .filter(a -> !a.keyed() && a.took().compareTo(claimTimeout) >= 0)
                    .collect(Collectors.groupingBy(Answer::client, Collectors.counting()));
            assertThat(slowUnkeyed).as("unkeyed tills that waited a claim timeout or longer more than once, and how often")
                    .allSatisfy((client, slow) -> assertThat(slow).isLessThan(2));
            assertThat(duringFreeze).filteredOn(Answer::keyed).as("keyed answers within the freeze").isNotEmpty()
                    .allSatisfy(a -> {
                        assertThat(a.status()).as(a.body()).isEqualTo(503);
                        assertThat(a.body()).contains("the Idempotency-Key could not be checked",
                                "retry later with the same Idempotency-Key");
                        // At worst a claim timeout waiting for a slot, then its own claim's: two, and
                        // what a loaded machine adds.
                        assertThat(a.took()).as(a.body()).isLessThan(claimTimeout.multipliedBy(2).plusSeconds(2));
                    });

            List<UUID> accepted = answers.stream().filter(a -> a.status() == 201)
                    .map(a -> UUID.fromString(a.body().replaceAll(".*\"purchaseId\":\"([^\"]+)\".*", "$1"))).toList();
            List<UUID> stored = purchasesBehind(Topology.STORE_EXCHANGE).stream().map(Purchase::purchaseId).toList();
            assertThat(stored).as("every accepted purchase stored once, nothing of a refused one")
                    .containsExactlyInAnyOrderElementsOf(accepted);
        } finally {
            stop.set(true);
        }
    }

    /** Every purchase in the shard queues of {@code exchange}, the messages left in place. */
    private static List<Purchase> purchasesBehind(String exchange) {
        await().atMost(Duration.ofSeconds(10)).until(() -> broker.messageCountBehind(exchange) > 0);
        return broker.purchasesBehind(exchange);
    }

    private static void drain() throws Exception {
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            for (String exchange : Topology.SHARDED_EXCHANGES) {
                for (String shard : broker.shardQueues(exchange)) {
                    channel.queuePurge(shard);
                }
            }
        }
    }
}
