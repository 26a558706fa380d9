package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.StoreQueryReply.Ranked;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code GET /items/top} end to end: purchase-api and one or two store-service partitions, each
 * from its jar, on the real broker (sharded mode, 4 shard queues). Purchases POSTed to the API
 * are counted by their partitions; the chain's top items, at every limit, equal a brute-force
 * count of what was accepted, and {@code purchases} the purchases accepted. With two partitions
 * the first sales make an item that is in neither partition's top two the chain's first, which
 * merging the partitions' top lists would miss.
 */
class ChainTopItemsIT {

    private static final int SHARDS = 4;
    private static final int STORES = 16;
    private static final int ITEMS = 50;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path stateDirs;

    private final TestBroker broker = TestBroker.create("chain-top-items");
    private final List<ServiceProcess> services = new ArrayList<>();
    private final Map<Integer, Long> sold = new HashMap<>();
    private long accepted;
    private String api;

    @AfterEach
    void stop() throws Exception {
        for (ServiceProcess service : services.reversed()) {
            service.close();
        }
        broker.close();
    }

    @ParameterizedTest(name = "{0} store partition(s)")
    @ValueSource(ints = {1, 2})
    void theChainsTopItemsAreTheBruteForceCountOfEveryAcceptedPurchase(int partitions) throws Exception {
        start(partitions);

        // Items 1, 2 sold 10 each at store 2 (partition 0 of 2), items 4, 5 at store 3 (partition
        // 1), item 3 9 at each: 18 in all, first, yet third at both partitions.
        for (int item : new int[] {1, 2}) {
            post(2, Map.of(item, 10));
        }
        for (int item : new int[] {4, 5}) {
            post(3, Map.of(item, 10));
        }
        post(2, Map.of(3, 9));
        post(3, Map.of(3, 9));
        awaitCounted(partitions);
        assertThat(get("/items/top?limit=2")).isEqualTo(body(List.of(new Ranked(3, 18), new Ranked(1, 10)), accepted));

        // Flat, small quantities over every store: many ties, and with two partitions round 2 and 3 of the merge.
        Random random = new Random(partitions);
        for (int i = 0; i < 300; i++) {
            Map<Integer, Integer> lines = new LinkedHashMap<>();
            for (int line = 1 + random.nextInt(4); line > 0; line--) {
                lines.merge(1 + random.nextInt(ITEMS), 1 + random.nextInt(2), Integer::sum);
            }
            post(1 + random.nextInt(STORES), lines);
        }
        awaitCounted(partitions);
        for (int limit : new int[] {1, 3, 10, ITEMS, 1000}) {
            assertThat(get("/items/top?limit=" + limit)).as("limit %d", limit).isEqualTo(body(bruteForce(limit), accepted));
        }
        assertThat(get("/items/top")).as("default limit").isEqualTo(body(bruteForce(10), accepted));
        double secondRounds = 0;
        for (ServiceProcess store : services.subList(0, partitions)) {
            secondRounds += store.metric("store_queries_seconds_count", "kind=\"ITEMS_SOLD_AT_LEAST\"");
        }
        if (partitions == 1) {
            assertThat(secondRounds).as("one partition: its top list is the answer").isZero();
        } else {
            assertThat(secondRounds).as("partitions asked round 2 of the merge").isPositive();
        }
    }

    private void start(int partitions) throws Exception {
        broker.applyTopology(SHARDS, partitions);
        Map<String, String> platform = Map.of("BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS),
                "STORE_PARTITIONS", Integer.toString(partitions),
                "PLATFORM_MAX_STORES", Integer.toString(STORES),
                "PLATFORM_MAX_ITEM_ID", Integer.toString(ITEMS));
        for (int partition = 0; partition < partitions; partition++) {
            Map<String, String> settings = new HashMap<>(platform);
            settings.put("STORE_PARTITION_INDEX", Integer.toString(partition));
            settings.put("STORE_DURABILITY_STATE_DIR", stateDirs.resolve("p" + partition).toString());
            ServiceProcess store = new ServiceProcess(broker, settings, "-Xmx256m", "-XX:TieredStopAtLevel=1");
            services.add(store);
            store.start("chain-top-items-it-store-service-p" + partition + "-of-" + partitions);
        }
        ServiceProcess purchaseApi = ServiceProcess.purchaseApi(broker, platform, "-Xmx256m", "-XX:TieredStopAtLevel=1");
        services.add(purchaseApi);
        purchaseApi.start("chain-top-items-it-purchase-api-" + partitions);
        for (ServiceProcess service : services) {
            service.awaitReady(Duration.ofSeconds(120));
        }
        api = "http://127.0.0.1:" + purchaseApi.port();
    }

    private void post(int store, Map<Integer, Integer> lines) throws Exception {
        String items = lines.entrySet().stream()
                .map(line -> "{\"ItemID\":\"" + line.getKey() + "\",\"numberOfItems\":" + line.getValue() + "}")
                .collect(Collectors.joining(",", "{\"items\":[", "]}"));
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(api + "/purchase/" + store + "/customer/"
                + store * 1000 + "/date/20210101")).POST(HttpRequest.BodyPublishers.ofString(items)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        accepted++;
        lines.forEach((item, quantity) -> sold.merge(item, (long) quantity, Long::sum));
    }

    private void awaitCounted(int partitions) {
        await("every accepted purchase counted").atMost(Duration.ofSeconds(60)).until(() -> {
            double counted = 0;
            for (ServiceProcess store : services.subList(0, partitions)) {
                counted += store.metric("store_purchases_counted");
            }
            return counted >= accepted;
        });
    }

    private String get(String path) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(api + path)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s: %s", path, response.body()).isEqualTo(200);
        return response.body();
    }

    private List<Ranked> bruteForce(int limit) {
        return sold.entrySet().stream().map(item -> new Ranked(item.getKey(), item.getValue()))
                .sorted(Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id))
                .limit(limit).toList();
    }

    private static String body(List<Ranked> items, long purchases) {
        return items.stream().map(item -> "{\"itemID\":" + item.id() + ",\"numberOfItems\":" + item.quantity() + "}")
                .collect(Collectors.joining(",", "{\"items\":[", "],\"purchases\":" + purchases + "}"));
    }
}
