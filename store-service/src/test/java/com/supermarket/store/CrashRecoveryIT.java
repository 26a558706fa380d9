package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * store-service as it runs in production, a separate process started from the built jar with
 * its state on disk, killed with SIGKILL at random moments while purchases stream in through the
 * real broker, and restarted each time: at the end the counts equal exactly what was published,
 * none lost and none twice. Small ranges and a small snapshot threshold make it snapshot every
 * second or so, so kills land in every phase: applying, appending, fsyncing, acknowledging,
 * rolling the log, writing a snapshot, deleting old files.
 */
class CrashRecoveryIT {

    private static final Logger log = LoggerFactory.getLogger(CrashRecoveryIT.class);

    private static final int SHARDS = 2;
    private static final int STORES = 64;
    private static final int ITEMS = 200;
    private static final int BUCKETS = 16;
    private static final int KILLS = 4;

    @TempDir
    Path stateDir;

    private final TestBroker broker = TestBroker.create("store-crash");
    private final Map<Integer, Map<Integer, Long>> published = new ConcurrentHashMap<>();
    private final AtomicInteger messagesPublished = new AtomicInteger();
    private final AtomicLong purchasesPublished = new AtomicLong();
    private final AtomicReference<Throwable> publishFailure = new AtomicReference<>();
    private volatile boolean streaming = true;
    private ServiceProcess service;

    @AfterEach
    void stop() throws Exception {
        if (service != null) {
            service.close();
        }
        broker.close();
    }

    @Test
    void countsEqualWhatWasPublishedAfterRepeatedKillNine() throws Exception {
        long seed = System.nanoTime();
        log.info("Seed {}", seed);
        Random random = new Random(seed);
        broker.applyTopology(SHARDS);
        service = new ServiceProcess(broker, Map.of(
                "BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS),
                "PLATFORM_MAX_STORES", Integer.toString(STORES),
                "PLATFORM_MAX_ITEM_ID", Integer.toString(ITEMS),
                "STORE_DURABILITY_STATE_DIR", stateDir.toString(),
                "STORE_DURABILITY_SNAPSHOT_LOG_SIZE", "256KB",
                "STORE_DURABILITY_SNAPSHOT_INTERVAL", "2s",
                "STORE_REDISCOVER_INTERVAL", "1s"), "-Xmx256m", "-XX:TieredStopAtLevel=1");

        ScheduledExecutorService publisher = Executors.newSingleThreadScheduledExecutor();
        try (Connection connection = broker.newConnection()) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            Random batches = new Random(seed + 1);
            // At most 500 messages (2,750 purchases) a second; each waits for its confirm, so fewer on a busy machine.
            publisher.scheduleAtFixedRate(() -> publishOne(channel, batches), 0, 2, TimeUnit.MILLISECONDS);

            start();
            for (int kill = 1; kill <= KILLS; kill++) {
                service.awaitReady(Duration.ofSeconds(90));
                // A random moment while it consumes: after 50 to 550 more messages.
                int at = messagesPublished.get() + 50 + random.nextInt(500);
                await("publisher at message " + at).atMost(Duration.ofSeconds(90))
                        .until(() -> messagesPublished.get() >= at || publishFailure.get() != null);
                assertThat(publishFailure.get()).as("publishing").isNull();
                if (kill == KILLS) {
                    // Each process may live less than the snapshot check's first tick; the last
                    // kill lands after a snapshot, so the last recovery reads one and its log.
                    await("a snapshot before the last kill").atMost(Duration.ofSeconds(60)).until(this::snapshotTaken);
                }
                long pid = service.process().pid();
                service.kill();
                log.info("Kill {}: SIGKILL to pid {} after message {}; state: {}", kill, pid, at, listState());
                start();
            }
            int last = messagesPublished.get() + 500;
            await("the last messages published").atMost(Duration.ofSeconds(120))
                    .until(() -> messagesPublished.get() >= last || publishFailure.get() != null);
            streaming = false;
            assertThat(publishFailure.get()).as("publishing").isNull();
            publisher.shutdown();
            assertThat(publisher.awaitTermination(30, TimeUnit.SECONDS)).isTrue();

            service.awaitReady(Duration.ofSeconds(90));
            try (RpcClient rpc = new RpcClient(connection)) {
                await("counts equal to what was published").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(500))
                        .untilAsserted(() -> {
                            for (int store = 1; store <= STORES; store++) {
                                assertThat(counted(rpc, store)).as("store %d", store)
                                        .isEqualTo(published.getOrDefault(store, Map.of()));
                            }
                            assertThat(service.metric("store_purchases_counted")).as("distinct purchases counted")
                                    .isEqualTo(purchasesPublished.get());
                        });
            }
            assertThat(broker.messageCountBehind(Topology.STORE_EXCHANGE)).as("left in the shard queues").isZero();
            assertThat(broker.messageCount(Topology.PARKING_QUEUE)).as("parked").isZero();
            long total = published.values().stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).sum();
            log.info("{} messages, {} units counted exactly over {} starts; state: {}", messagesPublished.get(), total,
                    service.starts(), listState());
            assertThat(snapshotTaken()).as("snapshots were taken, so kills could land around them").isTrue();
        } finally {
            publisher.shutdownNow();
        }
    }

    /** Publishes one batch (sometimes published twice) and waits for its confirm. */
    private void publishOne(Channel channel, Random random) {
        if (!streaming || publishFailure.get() != null) {
            return;
        }
        try {
            int bucket = random.nextInt(BUCKETS);
            int size = 1 + random.nextInt(10);
            List<Purchase> purchases = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                int store = bucket + BUCKETS * random.nextInt(STORES / BUCKETS);
                store = store == 0 ? BUCKETS * (STORES / BUCKETS) : store; // store ids are 1..STORES
                List<PurchaseItem> items = new ArrayList<>();
                for (int line = 1 + random.nextInt(5); line > 0; line--) {
                    items.add(new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(3)));
                }
                purchases.add(new Purchase(UUID.randomUUID(), store, 1, LocalDate.of(2021, 1, 1), items, Instant.now()));
            }
            int number = messagesPublished.get();
            List<Purchase> message = purchases;
            byte[] body = PurchaseBatch.frame(message.stream().map(WireFormat::encode).toList());
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                    .contentType(WireFormat.CONTENT_TYPE).deliveryMode(2).type(PurchaseBatch.MESSAGE_TYPE).build();
            String routingKey = Topology.routingKey(message.getFirst().storeId(), BUCKETS);
            channel.basicPublish(Topology.INGRESS_EXCHANGE, routingKey, properties, body);
            if (number % 50 == 0) {
                // As purchase-api would after a lost confirm: the same purchases again, counted once.
                channel.basicPublish(Topology.INGRESS_EXCHANGE, routingKey, properties, body);
            }
            channel.waitForConfirmsOrDie(10_000);
            for (Purchase purchase : message) {
                for (PurchaseItem item : purchase.items()) {
                    published.computeIfAbsent(purchase.storeId(), s -> new ConcurrentHashMap<>())
                            .merge(item.itemId(), (long) item.quantity(), Long::sum);
                }
            }
            purchasesPublished.addAndGet(message.size());
            messagesPublished.incrementAndGet();
        } catch (Exception | AssertionError e) {
            publishFailure.compareAndSet(null, e);
        }
    }

    private static Map<Integer, Long> counted(RpcClient rpc, int store) throws Exception {
        Map<Integer, Long> counts = new HashMap<>();
        for (Ranked ranked : rpc.query(Kind.TOP_ITEMS_AT_STORE, store, ITEMS).entries()) {
            counts.put(ranked.id(), ranked.quantity());
        }
        return counts;
    }

    private void start() throws IOException {
        service.start("crash-it-store-service");
        log.info("Started store-service (start {}, pid {}), output in {}", service.starts(), service.process().pid(),
                service.output());
    }

    private boolean snapshotTaken() throws IOException {
        try (Stream<Path> files = Files.list(stateDir)) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".snap"));
        }
    }

    private String listState() throws IOException {
        try (Stream<Path> files = Files.list(stateDir)) {
            return files.map(f -> f.getFileName() + " " + f.toFile().length()).sorted().toList().toString();
        }
    }
}
