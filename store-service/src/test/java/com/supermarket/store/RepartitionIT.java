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
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A change of the store partition count on a running install, by the documented procedure, with
 * store-service as separate processes from the built jar on the real broker (sharded mode, 8
 * shard queues): 2 partitions count purchases published as purchase-api publishes them; with
 * nothing arriving and the shard queues empty, {@code store-service repartition} takes their
 * counts and writes state directories for 4; the 2 stop, the 4 start on those directories; then
 * 4 -> 2 the same way. After each change every store's counts, every item's ranking of stores,
 * the chain's item totals and top items and the purchases counted are what was published;
 * purchases counted before a change and delivered again after it (routed under the new count,
 * to their new owner) are skipped as duplicates; new purchases count; nothing is parked; and a
 * partition started on a state directory of another partition count refuses it.
 */
class RepartitionIT {

    private static final int SHARDS = 8;
    private static final int STORES = 24;
    private static final int ITEMS = 20;
    private static final int PURCHASES = 400;
    private static final int DELIVERED_AGAIN = 120;
    private static final Pattern WROTE = Pattern.compile(
            "wrote store partition (\\d+) of (\\d+) to \\S+: \\d+ stores, (\\d+) purchases, (\\d+) units, digest ([0-9a-f]{16})");

    @TempDir
    Path stateDirs;

    private final TestBroker broker = TestBroker.create("repartition");
    private final HttpClient http = HttpClient.newHttpClient();
    private final Random random = new Random(51);
    private final List<ServiceProcess> running = new ArrayList<>();
    /** store -> item -> quantity, of every distinct purchase published. */
    private final Map<Integer, Map<Integer, Long>> expected = new HashMap<>();
    private final List<Purchase> published = new ArrayList<>();
    private long turn;
    /** How many copies the running partitions have. */
    private int copies = 1;

    @AfterEach
    void stop() throws Exception {
        for (ServiceProcess service : running) {
            service.close();
        }
        broker.close();
    }

    @Test
    void countsStayExactThroughTwoToFourPartitionsAndBackAndNothingIsCountedTwice() throws Exception {
        broker.applyTopology(SHARDS);
        try (Connection connection = broker.newConnection()) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            List<ServiceProcess> two = start(2, 1, stateDirs.resolve("two")).getFirst();
            publish(channel, fresh(PURCHASES), 2);
            awaitCounted(two);
            assertExact(connection, 2);

            List<ServiceProcess> four = repartition(two, 4, 1, stateDirs.resolve("four")).getFirst();
            assertExact(connection, 4);
            publish(channel, published.subList(0, DELIVERED_AGAIN), 4);
            awaitDuplicates(four, DELIVERED_AGAIN);
            publish(channel, fresh(200), 4);
            awaitCounted(four);
            assertExact(connection, 4);

            List<ServiceProcess> back = repartition(four, 2, 1, stateDirs.resolve("back")).getFirst();
            assertExact(connection, 2);
            publish(channel, published.subList(published.size() - DELIVERED_AGAIN, published.size()), 2);
            awaitDuplicates(back, DELIVERED_AGAIN);
            publish(channel, fresh(100), 2);
            awaitCounted(back);
            assertExact(connection, 2);
            for (ServiceProcess partition : back) {
                assertThat(partition.metric("store_purchases_rejected_total")).as("parked").isZero();
            }
        }

        ServiceProcess otherCount = partition(new StorePartition(0, 2), stateDirs.resolve("four").resolve("p0"), Map.of());
        running.add(otherCount);
        otherCount.start("repartition-it-other-count");
        await("a partition started on another partition count's state").atMost(Duration.ofSeconds(90))
                .until(() -> !otherCount.process().isAlive());
        assertThat(otherCount.process().exitValue()).isNotZero();
        assertThat(Files.readString(otherCount.output()))
                .contains("holds the counts of store partition 0 of 4, copy 0, not of this store partition 0 of 2, copy 0");
    }

    @Test
    void furtherCopiesOfTheNewPartitionsRebuildFromTheirSeededCopyZero() throws Exception {
        broker.applyTopology(SHARDS);
        try (Connection connection = broker.newConnection()) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            List<List<ServiceProcess>> one = start(1, 2, stateDirs.resolve("one"));
            publish(channel, fresh(PURCHASES), 1);
            awaitCounted(one.get(0));
            awaitCounted(one.get(1));

            List<List<ServiceProcess>> two = repartition(one.get(0), 2, 2, stateDirs.resolve("two"));
            awaitCounted(two.get(1));
            for (int p = 0; p < 2; p++) {
                assertThat(Files.readString(two.get(1).get(p).output())).contains("Rebuilt the empty state directory");
                assertThat(summary(two.get(1).get(p))).as("copy 1 of partition %d", p)
                        .isEqualTo(summary(two.get(0).get(p)).replace("\"copy\":0", "\"copy\":1"));
            }
            assertExact(connection, 2);
            publish(channel, published.subList(0, DELIVERED_AGAIN), 2);
            awaitDuplicates(two.get(0), DELIVERED_AGAIN);
            awaitDuplicates(two.get(1), DELIVERED_AGAIN);
            publish(channel, fresh(100), 2);
            awaitCounted(two.get(0));
            awaitCounted(two.get(1));
            assertExact(connection, 2);
            for (int p = 0; p < 2; p++) {
                assertThat(summary(two.get(1).get(p))).isEqualTo(summary(two.get(0).get(p)).replace("\"copy\":0", "\"copy\":1"));
            }
        }
    }

    /**
     * The documented change: {@code store-service repartition} from copy 0 of the running partitions
     * (nothing arriving, their queues empty), every running copy stops, copy 0 of each new partition
     * starts on what it wrote and the further copies on empty state directories; each copy 0
     * says in {@code GET /state/summary} what the command said it would hold.
     *
     * @return the new partitions, by copy
     */
    private List<List<ServiceProcess>> repartition(List<ServiceProcess> current, int partitions, int copies, Path out)
            throws Exception {
        for (int copy = 0; copy < copies; copy++) {
            assertThat(broker.messageCountBehind(Topology.storeExchange(copy))).as("left in copy %d's shard queues", copy).isZero();
        }
        List<String> command = new ArrayList<>(List.of("repartition", "--partitions", Integer.toString(partitions),
                "--out", out.toString()));
        for (ServiceProcess partition : current) {
            command.add("http://127.0.0.1:" + partition.port());
        }
        String log = "repartition-it-to-" + partitions;
        int status = ServiceProcess.command(log, command.toArray(String[]::new));
        String report = Files.readString(Path.of("target", log + ".log"));
        assertThat(status).as(report).isZero();
        for (ServiceProcess service : running) {
            service.close();
        }
        running.clear();
        List<List<ServiceProcess>> copyGroups = start(partitions, copies, out);
        List<ServiceProcess> started = copyGroups.getFirst();
        awaitCounted(started);
        Matcher wrote = WROTE.matcher(report);
        int seeds = 0;
        while (wrote.find()) {
            int q = Integer.parseInt(wrote.group(1));
            assertThat(Integer.parseInt(wrote.group(2))).isEqualTo(partitions);
            String summary = summary(started.get(q));
            assertThat(summary).as("partition %d of %d", q, partitions).contains("\"partitions\":" + partitions,
                    "\"purchases\":" + wrote.group(3), "\"quantity\":" + wrote.group(4), "\"digest\":\"" + wrote.group(5) + "\"");
            seeds++;
        }
        assertThat(seeds).as(report).isEqualTo(partitions);
        return copyGroups;
    }

    /**
     * {@code partitions} partitions of {@code copies} copies each, ready: copy 0 of partition p on
     * {@code stateDirectories/p<p>}, copy c on {@code p<p>-c<c>}, its peers the other copies of p.
     *
     * @return by copy, by partition
     */
    private List<List<ServiceProcess>> start(int partitions, int copies, Path stateDirectories) throws Exception {
        int[][] ports = new int[partitions][copies];
        for (int[] partition : ports) {
            for (int copy = 0; copy < copies; copy++) {
                partition[copy] = ServiceProcess.freePort();
            }
        }
        this.copies = copies;
        List<List<ServiceProcess>> started = new ArrayList<>();
        for (int copy = 0; copy < copies; copy++) {
            List<ServiceProcess> group = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                Map<String, String> settings = new HashMap<>(Map.of("SERVER_PORT", Integer.toString(ports[p][copy])));
                if (copies > 1) {
                    List<String> peers = new ArrayList<>();
                    for (int other = 0; other < copies; other++) {
                        if (other != copy) {
                            peers.add("http://127.0.0.1:" + ports[p][other]);
                        }
                    }
                    settings.putAll(Map.of("STORE_COPIES", Integer.toString(copies), "STORE_PARTITION_COPY",
                            Integer.toString(copy), "BROKER_RETRY_INTERVAL", "500ms", "STORE_REBUILD_PEERS", String.join(",", peers)));
                }
                ServiceProcess service = partition(new StorePartition(p, partitions),
                        stateDirectories.resolve(copy == 0 ? "p" + p : "p" + p + "-c" + copy), settings);
                running.add(service);
                group.add(service);
                service.start("repartition-it-p" + p + "-of-" + partitions + "-c" + copy);
            }
            started.add(group);
        }
        for (ServiceProcess service : running) {
            service.awaitReady(Duration.ofSeconds(120));
        }
        return started;
    }

    private ServiceProcess partition(StorePartition partition, Path stateDirectory, Map<String, String> more) throws Exception {
        Map<String, String> settings = new HashMap<>(Map.of(
                "BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS),
                "STORE_PARTITIONS", Integer.toString(partition.partitions()),
                "STORE_PARTITION_INDEX", Integer.toString(partition.index()),
                "PLATFORM_MAX_STORES", Integer.toString(STORES),
                "PLATFORM_MAX_ITEM_ID", Integer.toString(ITEMS),
                "STORE_DURABILITY_STATE_DIR", stateDirectory.toString()));
        settings.putAll(more);
        return new ServiceProcess(broker, settings, "-Xmx256m", "-XX:TieredStopAtLevel=1");
    }

    /** {@code count} new purchases, recorded as expected. */
    private List<Purchase> fresh(int count) {
        List<Purchase> purchases = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int store = 1 + random.nextInt(STORES);
            List<PurchaseItem> items = new ArrayList<>();
            for (int line = 0, lines = 1 + random.nextInt(3); line < lines; line++) {
                items.add(new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(4)));
            }
            Purchase purchase = new Purchase(UUID.randomUUID(), store, 1, LocalDate.of(2021, 1, 1), items, Instant.now());
            for (PurchaseItem item : items) {
                expected.computeIfAbsent(store, s -> new HashMap<>()).merge(item.itemId(), (long) item.quantity(), Long::sum);
            }
            purchases.add(purchase);
        }
        published.addAll(purchases);
        return purchases;
    }

    /** As purchase-api publishes them under {@code partitions}: batches of one partition's stores, each to the next of its shard queues. */
    private void publish(Channel channel, List<Purchase> purchases, int partitions) throws Exception {
        Map<Integer, List<byte[]>> byPartition = new TreeMap<>();
        for (Purchase purchase : purchases) {
            byPartition.computeIfAbsent(StorePartition.ownerOf(purchase.storeId(), partitions), p -> new ArrayList<>())
                    .add(WireFormat.encode(purchase));
        }
        for (Map.Entry<Integer, List<byte[]>> partition : byPartition.entrySet()) {
            List<byte[]> encoded = partition.getValue();
            for (int from = 0; from < encoded.size(); from += 5) {
                channel.basicPublish(Topology.INGRESS_EXCHANGE,
                        Topology.routingKey(partition.getKey(), partitions, turn++, SHARDS),
                        new AMQP.BasicProperties.Builder().contentType(WireFormat.CONTENT_TYPE).deliveryMode(2)
                                .type(PurchaseBatch.MESSAGE_TYPE).build(),
                        PurchaseBatch.frame(encoded.subList(from, Math.min(from + 5, encoded.size()))));
            }
        }
        channel.waitForConfirmsOrDie(10_000);
    }

    private void awaitCounted(List<ServiceProcess> partitions) {
        await("every distinct purchase counted").atMost(Duration.ofSeconds(60)).until(() -> {
            double counted = 0;
            for (ServiceProcess partition : partitions) {
                counted += partition.metric("store_purchases_counted");
            }
            return counted == published.size() && queuesEmpty();
        });
    }

    private void awaitDuplicates(List<ServiceProcess> partitions, int duplicates) {
        await("the purchases delivered again skipped").atMost(Duration.ofSeconds(60)).until(() -> {
            double skipped = 0;
            for (ServiceProcess partition : partitions) {
                skipped += partition.metric("store_purchases_duplicates_total");
            }
            return skipped == duplicates && queuesEmpty();
        });
    }

    private boolean queuesEmpty() {
        return broker.messageCountBehind(Topology.STORE_EXCHANGE) == 0 && (copies < 2
                || broker.messageCountBehind(Topology.storeExchange(1)) == 0);
    }

    /** What every partition answers is what was published: per store, per item, the chain's totals and top items. */
    private void assertExact(Connection connection, int partitions) throws Exception {
        Map<Integer, Long> chainTotals = new TreeMap<>();
        List<List<Ranked>> topStores = new ArrayList<>();
        for (int item = 0; item < ITEMS; item++) {
            topStores.add(new ArrayList<>());
        }
        long purchases = 0;
        for (int p = 0; p < partitions; p++) {
            StorePartition partition = new StorePartition(p, partitions);
            try (RpcClient rpc = new RpcClient(connection, partition.queryQueue())) {
                for (int store = 1; store <= STORES; store++) {
                    if (partition.owns(store)) {
                        assertThat(asMap(rpc.query(Kind.TOP_ITEMS_AT_STORE, store, ITEMS).entries()))
                                .as("store %d at %s", store, partition).isEqualTo(expected.getOrDefault(store, Map.of()));
                    }
                }
                StoreQueryReply items = rpc.query(Kind.TOP_ITEMS, 0, ITEMS);
                purchases += items.purchases();
                items.entries().forEach(entry -> chainTotals.merge(entry.id(), entry.quantity(), Long::sum));
                for (int item = 1; item <= ITEMS; item++) {
                    topStores.get(item - 1).addAll(rpc.query(Kind.TOP_STORES_FOR_ITEM, item, STORES).entries());
                }
            }
        }
        assertThat(purchases).as("purchases counted over %d partitions", partitions).isEqualTo(published.size());
        Map<Integer, Long> expectedTotals = new TreeMap<>();
        expected.values().forEach(store -> store.forEach((item, quantity) -> expectedTotals.merge(item, quantity, Long::sum)));
        assertThat(chainTotals).as("the chain's item totals").isEqualTo(expectedTotals);
        assertThat(ranked(chainTotals).subList(0, 10)).as("the chain's top 10 items").isEqualTo(ranked(expectedTotals).subList(0, 10));
        for (int item = 1; item <= ITEMS; item++) {
            Map<Integer, Long> sellers = new HashMap<>();
            for (Map.Entry<Integer, Map<Integer, Long>> store : expected.entrySet()) {
                if (store.getValue().containsKey(item)) {
                    sellers.put(store.getKey(), store.getValue().get(item));
                }
            }
            assertThat(ranked(asMap(topStores.get(item - 1)))).as("the stores that sold item %d most", item)
                    .isEqualTo(ranked(sellers));
        }
    }

    private String summary(ServiceProcess partition) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + partition.port() + "/state/summary")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }

    private static Map<Integer, Long> asMap(List<Ranked> entries) {
        Map<Integer, Long> counts = new HashMap<>();
        for (Ranked ranked : entries) {
            assertThat(counts.put(ranked.id(), ranked.quantity())).as("%d once", ranked.id()).isNull();
        }
        return counts;
    }

    /** Most first, ties by lower id, as the rankings are. */
    private static List<Ranked> ranked(Map<Integer, Long> quantities) {
        return quantities.entrySet().stream().map(entry -> new Ranked(entry.getKey(), entry.getValue()))
                .sorted(Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id)).toList();
    }
}
