package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.result.FullLoad;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class LoadRunTest {

    private static final Pattern PURCHASE = Pattern.compile("/purchase/(\\d+)/customer/(\\d+)/date/(\\d{8})");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void sendsNineHoursOfPurchasesPerStoreWithValidPathsAndBodies() throws Exception {
        try (StubApi api = new StubApi(request -> 201)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(8, 10), null);

            List<StubApi.Request> requests = api.requests();
            assertThat(requests).hasSize(8 * 9 * 10);
            for (StubApi.Request request : requests) {
                assertThat(request.method()).isEqualTo("POST");
                Matcher path = PURCHASE.matcher(request.path());
                assertThat(path.matches()).as(request.path()).isTrue();
                int store = Integer.parseInt(path.group(1));
                long customer = Long.parseLong(path.group(2));
                assertThat(store).isBetween(1, 8);
                assertThat(customer).isBetween(store * 1000L, store * 1000L + 999);
                assertThat(path.group(3)).isEqualTo("20210101");
                assertValidBody(request.body());
            }
            Map<String, Long> perStore = requests.stream()
                    .collect(Collectors.groupingBy(request -> request.path().split("/")[2], Collectors.counting()));
            assertThat(perStore).hasSize(8).allSatisfy((store, count) -> assertThat(count).isEqualTo(90L));
            assertThat(result.successful()).isEqualTo(720);
            assertThat(result.failed()).isZero();
            assertThat(result.postLatency().count()).isEqualTo(720);
            assertThat(result.latency()).containsOnlyKeys(RequestType.POST);
        }
    }

    @Test
    void mixesInBothGetQueriesAtTheRequestedRatio() throws Exception {
        try (StubApi api = new StubApi(request -> request.method().equals("POST") ? 201 : 200)) {
            RunParameters parameters = new RunParameters(4, 1000, 100_000, 10, 5, "20210101", 0.2, 0, 10, 0, 0, 1);
            RunResult result = Runs.run(api.baseUrl(), parameters, null);

            Map<String, Long> byKind = api.requests().stream().collect(Collectors.groupingBy(
                    request -> request.method() + " " + request.path().replaceAll("/\\d+", "/N"), Collectors.counting()));
            assertThat(byKind).containsExactlyInAnyOrderEntriesOf(Map.of(
                    "POST /purchase/N/customer/N/date/N", 360L,
                    "GET /items/store/N", 36L,
                    "GET /items/top10/N", 36L));
            assertThat(api.requests()).filteredOn(request -> request.method().equals("GET"))
                    .allSatisfy(request -> assertThat(Integer.parseInt(request.path().split("/")[3])).isBetween(1, 100_000));
            assertThat(result.latency().get(RequestType.GET_STORE).count()).isEqualTo(36);
            assertThat(result.latency().get(RequestType.GET_TOP10).count()).isEqualTo(36);
            assertThat(result.successful()).isEqualTo(432);
        }
    }

    @Test
    void eachStoreAsksAtItsOwnPointOfTheGetCycle() throws Exception {
        try (StubApi api = new StubApi(request -> request.method().equals("POST") ? 201 : 200)) {
            RunParameters parameters = new RunParameters(8, 1000, 100_000, 10, 5, "20210101", 0.1, 0, 10, 0, 0, 1);
            Runs.run(api.baseUrl(), parameters, null);

            // A store's first query is about its own store; count the store's POSTs before it.
            Map<Integer, Integer> postsBeforeFirstGet = new HashMap<>();
            Map<Integer, Integer> posts = new HashMap<>();
            Map<Integer, Integer> gets = new HashMap<>();
            for (StubApi.Request request : api.requests()) {
                if (request.method().equals("POST")) {
                    posts.merge(Integer.parseInt(request.path().split("/")[2]), 1, Integer::sum);
                } else if (request.path().startsWith("/items/store/")) {
                    int store = Integer.parseInt(request.path().split("/")[3]);
                    postsBeforeFirstGet.putIfAbsent(store, posts.getOrDefault(store, 0));
                    gets.merge(store, 1, Integer::sum);
                }
            }
            assertThat(postsBeforeFirstGet).hasSize(8).allSatisfy((store, count) -> assertThat(count).isBetween(1, 10));
            assertThat(Set.copyOf(postsBeforeFirstGet.values())).as("POSTs before each store's first GET")
                    .hasSizeGreaterThanOrEqualTo(4);
            // 90 POSTs at 0.1: 9 GETs per store, alternating, so 5 of them about the own store.
            assertThat(gets).hasSize(8).allSatisfy((store, count) -> assertThat(count).isEqualTo(5));
            assertThat(api.requests()).hasSize(8 * (90 + 9));
        }
    }

    @Test
    void sendsEachStoresTillKeyAndTheManagerKeyOnTheTop10Queries() throws Exception {
        Path keys = dir.resolve("till-keys.txt");
        Files.writeString(keys, "# <store or manager> <key> <label>\n1 tk_one till-1\n1 tk_one_b till-2\n2 tk_two till-1\n"
                + "3 tk_three till-1\nmanager tk_boss manager-1\n");
        try (StubApi api = new StubApi(request -> request.method().equals("POST") ? 201 : 200)) {
            RunParameters parameters = new RunParameters(3, 1000, 100_000, 10, 5, "20210101", 0.2, 0, 10, 0, 0, 1);
            RunResult result = Runs.run(api.baseUrl(), parameters, null, RunSettings.PAUSE_RETRIES_AFTER,
                    TillKeyFile.read(keys));

            Map<String, String> keyOfStore = Map.of("1", "Bearer tk_one", "2", "Bearer tk_two", "3", "Bearer tk_three");
            assertThat(api.requests()).filteredOn(request -> !request.path().startsWith("/items/top10/"))
                    .hasSize(270 + 27)
                    .allSatisfy(request -> assertThat(request.authorization())
                            .isEqualTo(keyOfStore.get(request.path().split("/")[request.method().equals("POST") ? 2 : 3])));
            assertThat(api.requests()).filteredOn(request -> request.path().startsWith("/items/top10/"))
                    .hasSize(27).allSatisfy(request -> assertThat(request.authorization()).isEqualTo("Bearer tk_boss"));
            assertThat(result.successful()).isEqualTo(324);
        }
    }

    @Test
    void sendsNoKeyWithoutAKeyFile() throws Exception {
        try (StubApi api = new StubApi(request -> 201)) {
            Runs.run(api.baseUrl(), Runs.standard(2, 1), null);

            assertThat(api.requests()).hasSize(18).allSatisfy(request -> assertThat(request.authorization()).isNull());
        }
    }

    @Test
    void startsCentralAfterAnyStoreSentThreeHoursAndWestAfterFive() throws Exception {
        int perHour = 10;
        // Stores 1-2 east, 3-4 central, 5-8 west. The stub holds every request beyond the trigger
        // hour until the next phase shows up, so a late phase would show as a count far past it.
        Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();
        CountDownLatch centralSeen = new CountDownLatch(1);
        CountDownLatch westSeen = new CountDownLatch(1);
        AtomicInteger eastCountAtCentral = new AtomicInteger(-1);
        AtomicInteger earlierCountAtWest = new AtomicInteger(-1);
        Function<List<Integer>, Integer> maxCount = stores -> stores.stream()
                .mapToInt(store -> counts.computeIfAbsent(store, s -> new AtomicInteger()).get()).max().orElse(0);
        StubApi.Responder responder = request -> {
            int store = Integer.parseInt(request.path().split("/")[2]);
            int count = counts.computeIfAbsent(store, s -> new AtomicInteger()).incrementAndGet();
            if (store >= 3 && store <= 4 && eastCountAtCentral.compareAndSet(-1, maxCount.apply(List.of(1, 2)))) {
                centralSeen.countDown();
            }
            if (store >= 5 && earlierCountAtWest.compareAndSet(-1, maxCount.apply(List.of(1, 2, 3, 4)))) {
                westSeen.countDown();
            }
            if (store <= 4 && count > 3 * perHour) {
                centralSeen.await(10, TimeUnit.SECONDS);
            }
            if (store <= 4 && count > 5 * perHour) {
                westSeen.await(10, TimeUnit.SECONDS);
            }
            return 201;
        };
        try (StubApi api = new StubApi(responder)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(8, perHour), null);

            // The trigger store's 31st request may arrive just before or after the first central one.
            assertThat(eastCountAtCentral.get()).isBetween(3 * perHour, 3 * perHour + 1);
            assertThat(earlierCountAtWest.get()).isBetween(5 * perHour, 5 * perHour + 1);
            assertThat(api.requests()).hasSize(8 * 9 * perHour);
            assertThat(result.phases()).extracting(PhaseStart::name, PhaseStart::firstStore, PhaseStart::lastStore)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("east", 1, 2),
                            org.assertj.core.groups.Tuple.tuple("central", 3, 4),
                            org.assertj.core.groups.Tuple.tuple("west", 5, 8));
            assertThat(result.phases()).extracting(PhaseStart::atSeconds).isSorted().allSatisfy(at -> assertThat(at).isNotNegative());
        }
    }

    @Test
    void opensEveryStoreAtTheStartWhenAskedTo() throws Exception {
        int perHour = 10;
        // Stores 1-2 east, 3-4 central, 5-8 west. The stub holds the east stores' requests after
        // their first until a west store has sent: in phases, west would wait for five hours.
        CountDownLatch westSeen = new CountDownLatch(1);
        AtomicInteger eastRequestsBeforeWest = new AtomicInteger();
        StubApi.Responder responder = request -> {
            int store = Integer.parseInt(request.path().split("/")[2]);
            if (store >= 5) {
                westSeen.countDown();
            } else if (store <= 2 && westSeen.getCount() == 1 && eastRequestsBeforeWest.incrementAndGet() > 2) {
                westSeen.await(5, TimeUnit.SECONDS);
            }
            return 201;
        };
        try (StubApi api = new StubApi(responder)) {
            RunResult result = Runs.allStoresAtOnce(api.baseUrl(), Runs.standard(8, perHour));

            assertThat(eastRequestsBeforeWest.get()).as("east requests before the first west one").isLessThanOrEqualTo(4);
            assertThat(api.requests()).hasSize(8 * 9 * perHour);
            assertThat(result.phases()).extracting(PhaseStart::name).containsExactly("east", "central", "west");
        }
    }

    @Test
    void measuresTheWindowInWhichEveryStoreSendsApart() throws Exception {
        int perHour = 10;
        int perStore = 9 * perHour;
        // Stores 1-2 east, 3-4 central, 5-8 west. The stub answers in 10 ms while every store
        // sends (a west store seen, none done) and in 40 ms before and after.
        Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();
        AtomicInteger westSeen = new AtomicInteger();
        AtomicInteger storesDone = new AtomicInteger();
        StubApi.Responder responder = request -> {
            int store = Integer.parseInt(request.path().split("/")[2]);
            if (store >= 5) {
                westSeen.set(1);
            }
            boolean everyStoreSends = westSeen.get() == 1 && storesDone.get() == 0;
            if (counts.computeIfAbsent(store, s -> new AtomicInteger()).incrementAndGet() == perStore) {
                storesDone.incrementAndGet();
            }
            Thread.sleep(everyStoreSends ? 10 : 40);
            return 201;
        };
        try (StubApi api = new StubApi(responder)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(8, perHour), null);

            FullLoad full = result.fullLoad();
            assertThat(full.seconds()).isPositive().isLessThan(result.wallTimeSeconds() / 2);
            assertThat(full.requestsPerSecond()).isPositive();
            assertThat(full.latency()).containsOnlyKeys(RequestType.POST);
            LatencySummary window = full.latency().get(RequestType.POST);
            assertThat(window.count()).isPositive().isLessThan(result.postLatency().count() / 2);
            // Whole sample intervals only: a 40 ms answer begun just before the west opened may count.
            assertThat(window.medianMs()).isBetween(10.0, 39.0);
            assertThat(result.postLatency().p99Ms()).isGreaterThanOrEqualTo(40.0);
            // The loop is probed every 5 ms throughout the window: at least every 10 ms while it
            // lags less than a period, and a longer stall's swallowed probes are filled in. How
            // large the lag is depends on the machine, so only its shape is checked.
            LatencySummary lag = full.clientLoopLag();
            assertThat(lag.count()).isGreaterThan(Math.round(full.seconds() * 50));
            assertThat(lag.medianMs()).isNotNegative().isLessThanOrEqualTo(lag.p99Ms());
            assertThat(lag.p99Ms()).isLessThanOrEqualTo(lag.maxMs());
        }
    }

    @Test
    void countsClientAndServerErrorsAsFailures() throws Exception {
        try (StubApi api = new StubApi(request -> switch (request.index() % 4) {
            case 1 -> 400;
            case 2 -> 503;
            default -> 201;
        })) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(4, 4), null);

            assertThat(result.successful()).isEqualTo(72);
            assertThat(result.failed()).isEqualTo(72);
            assertThat(result.failuresByStatus()).containsExactlyInAnyOrderEntriesOf(Map.of("400", 36L, "503", 36L));
            assertThat(result.failuresByError()).isEmpty();
            assertThat(result.postLatency().count()).isEqualTo(72);
        }
    }

    @Test
    void opensANewConnectionWhenTheServerClosedTheLastOne() throws Exception {
        try (StubApi api = new StubApi(request -> 201).closingEachConnection()) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(4, 5), null);

            assertThat(api.requests()).hasSize(4 * 9 * 5);
            assertThat(result.successful()).isEqualTo(180);
            assertThat(result.firstTryFailures()).isZero();
        }
    }

    @Test
    void countsConnectionErrorsAsFailures() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        RunResult result = Runs.run(URI.create("http://127.0.0.1:" + closedPort), Runs.standard(2, 2), null);

        assertThat(result.successful()).isZero();
        assertThat(result.failed()).isEqualTo(2 * 9 * 2);
        assertThat(result.failuresByError()).containsExactly(Map.entry("ConnectException", 36L));
        assertThat(result.failuresByStatus()).isEmpty();
        assertThat(result.latency()).isEmpty();
    }

    @Test
    void writesOneCsvRecordPerRequestIncludingFailures() throws Exception {
        Path csv = dir.resolve("requests.csv");
        try (StubApi api = new StubApi(request -> request.index() % 3 == 0 ? 500 : 201)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(4, 10), csv);

            List<String> lines = Files.readAllLines(csv);
            assertThat(lines.getFirst()).isEqualTo(CsvSink.HEADER);
            assertThat(lines).hasSize(1 + 360);
            Map<String, Long> byStatus = lines.stream().skip(1).map(line -> line.split(","))
                    .peek(fields -> assertThat(fields).hasSize(5))
                    .peek(fields -> assertThat(fields[1]).isEqualTo("POST"))
                    .peek(fields -> assertThat(fields[2]).matches("\\d+\\.\\d{3}"))
                    .collect(Collectors.groupingBy(fields -> fields[3], Collectors.counting()));
            assertThat(byStatus).containsExactlyInAnyOrderEntriesOf(Map.of("500", 120L, "201", 240L));
            assertThat(result.failed()).isEqualTo(120);
        }
    }

    @Test
    void openModelPacesRequestsAndTimesThemFromTheirIntendedSendTime() throws Exception {
        Path csv = dir.resolve("paced.csv");
        CountDownLatch never = new CountDownLatch(1);
        // One store, 9 POSTs at 20 requests/s: one every 50 ms. The first answer takes 400 ms, so
        // the next ones are late; a wrk2-style client must charge that wait to them.
        try (StubApi api = new StubApi(request -> {
            if (request.index() == 0) {
                never.await(400, TimeUnit.MILLISECONDS);
            }
            return 201;
        })) {
            RunParameters paced = new RunParameters(1, 1000, 100_000, 1, 5, "20210101", 0, 20, 10, 0, 0, 1);
            RunResult result = Runs.run(api.baseUrl(), paced, csv);

            List<long[]> records = Files.readAllLines(csv).stream().skip(1).map(line -> line.split(","))
                    .map(fields -> new long[] { Long.parseLong(fields[0]),
                            Math.round(Double.parseDouble(fields[2]) * 1000) })
                    .toList();
            assertThat(records).hasSize(9);
            for (int i = 1; i < records.size(); i++) {
                // Start times are the schedule, 50 ms apart, not when the late requests really went.
                assertThat(records.get(i)[0] - records.get(i - 1)[0]).isBetween(49L, 51L);
            }
            assertThat(records.get(0)[1]).isGreaterThanOrEqualTo(400_000);
            assertThat(records.get(1)[1]).isGreaterThanOrEqualTo(350_000 - 1_000);
            assertThat(result.mode()).isEqualTo("open");
            assertThat(result.successful()).isEqualTo(9);
        }
    }

    private static void assertValidBody(String body) throws IOException {
        JsonNode items = JSON.readTree(body).get("items");
        assertThat(items.isArray()).isTrue();
        assertThat(items.size()).isEqualTo(5);
        for (JsonNode item : items) {
            assertThat(item.get("ItemID").isString()).isTrue();
            assertThat(Integer.parseInt(item.get("ItemID").asString())).isBetween(1, 100_000);
            assertThat(item.get("numberOfItems").asInt()).isEqualTo(1);
        }
    }
}
