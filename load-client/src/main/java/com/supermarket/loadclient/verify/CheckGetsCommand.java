package com.supermarket.loadclient.verify;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;

import com.supermarket.contract.StoreQuery;
import com.supermarket.loadclient.run.TillKeyFile;
import com.supermarket.loadclient.verify.PurchaseTotals.Ranked;
import com.supermarket.loadclient.verify.PurchaseTotals.Summary;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code check-gets}: both GETs of purchase-api checked exact against a brute-force count over
 * purchases-service's database ({@link PurchaseTotals}), and optionally every store-service
 * copy's state summary too. Run once the pipeline has drained (after {@code verify}). Picocli
 * fills the fields; not thread-safe (the GETs run concurrently inside {@link #call}).
 */
@Command(name = "check-gets", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        description = {
                "Checks the GETs of purchase-api against a brute-force count over purchases-service's database",
                "(MySQL/MariaDB profile: one SQL aggregate of every purchase's item lines). For every store with sales",
                "and --absent-samples stores without, GET /items/store/{id}; for every item sold and --absent-samples",
                "items not sold, GET /items/top10/{id}; GET /items/top and /items/top?limit=1000 (the chain's top",
                "items; its purchases must be the database's); each answer must equal the database's top list exactly:",
                "most first, ties to the lower id (store-service's and purchase-api's order), only positive quantities,",
                "10 items / 5 stores unless --store-limit / --item-limit ask ?limit=N. With --store-state-url, every",
                "store-service copy's GET /state/summary (purchases, quantity, digest of its partition's counts) must",
                "equal the database's too. Run it once the pipeline has drained (verify passed), with --since the",
                "moment store-service's state started empty when the database holds older purchases.",
                "Exit status: 0 every answer exact; 1 a mismatch or a GET that failed; 2 bad usage, an unreadable",
                "database, or the dynamodb profile (not supported: check with the MySQL profile)." })
public final class CheckGetsCommand implements Callable<Integer> {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int ATTEMPTS = 3;

    /** The storage profile of purchases-service. */
    enum Profile { mysql, dynamodb }

    @Spec
    private CommandSpec spec;

    @Option(names = {"-u", "--base-url"}, description = "purchase-api's base URL.")
    private URI baseUrl = URI.create("http://127.0.0.1:8080");

    @Option(names = "--profile", description = "purchases-service's storage profile: mysql; dynamodb is refused.")
    private Profile profile = Profile.mysql;

    @Option(names = "--jdbc-url", description = "purchases-service's database (Connector/J URL).")
    private String jdbcUrl = "jdbc:mysql://127.0.0.1:3306/purchases_local";

    @Option(names = "--db-user", description = "A database user that may read the purchase table.")
    private String dbUser = "root";

    @Option(names = "--db-password", defaultValue = "${env:MYSQL_PASSWORD:-}", showDefaultValue = picocli.CommandLine.Help.Visibility.NEVER,
            description = "Its password (default: the environment's MYSQL_PASSWORD, else none).")
    private String dbPassword;

    @Option(names = "--since", paramLabel = "TIME", description = "Only purchases accepted at or after TIME count: epoch "
            + "microseconds or an ISO-8601 instant (default: every purchase in the database).")
    private String since;

    @Option(names = "--max-stores", description = "The platform's stores are 1..N (where absent stores are picked).")
    private int maxStores = 1024;

    @Option(names = "--max-item-id", description = "The platform's items are 1..N (where absent items are picked).")
    private int maxItemId = 100_000;

    @Option(names = "--absent-samples", paramLabel = "N", description = "Stores and items without sales also asked (each must answer an empty list).")
    private int absentSamples = 20;

    @Option(names = "--item-sample", paramLabel = "N", description = "Ask GET /items/top10/{id} for N of the items sold, "
            + "spread over their ids (default 0: every item sold).")
    private int itemSample;

    @Option(names = "--store-limit", paramLabel = "N", description = "Ask GET /items/store/{id}?limit=N (default: no limit parameter, 10 expected).")
    private Integer storeLimit;

    @Option(names = "--item-limit", paramLabel = "N", description = "Ask GET /items/top10/{id}?limit=N (default: no limit parameter, 5 expected).")
    private Integer itemLimit;

    @Option(names = "--concurrency", description = "GETs in flight at once.")
    private int concurrency = 16;

    @Option(names = "--store-state-url", paramLabel = "URL", description = "store-service instances' base URLs (GET "
            + "/state/summary), copy group by copy group (the partitions of copy 0, then of copy 1, ...), as verify's.")
    private List<URI> storeStateUrls = new ArrayList<>();

    @Option(names = "--store-copies", paramLabel = "C", description = "Copies of every partition: the --store-state-url list is C copy groups.")
    private int storeCopies = 1;

    @Option(names = "--max-examples", paramLabel = "N", description = "Mismatches printed per GET.")
    private int maxExamples = 5;

    @Option(names = "--till-keys", paramLabel = "FILE", description = "Till authentication on: send the first manager key "
            + "of FILE (scripts/till-keys.sh's format, as run --till-keys) with every GET.")
    private Path tillKeys;

    @Option(names = "--top-items-out", paramLabel = "FILE", description = "Also write the database's answer to GET "
            + "/items/top?limit=1000 to FILE, as the API's JSON ({\"items\":[...],\"purchases\":N}), for a check of "
            + "what a page shows.")
    private Path topItemsOut;

    /** The Authorization header's value of every GET, or null. */
    private String authorization;

    @Override
    public Integer call() throws Exception {
        if (profile == Profile.dynamodb) {
            System.err.println("[check-gets] the dynamodb profile is not supported: this check sums the purchases with SQL; "
                    + "run the platform with the mysql profile to check the GETs");
            return 2;
        }
        require(concurrency >= 1 && absentSamples >= 0 && maxExamples >= 0 && itemSample >= 0 && maxStores >= 1 && maxItemId >= 1,
                "--concurrency, --max-stores and --max-item-id must be positive, --absent-samples, --item-sample and "
                        + "--max-examples not negative");
        require((storeLimit == null || storeLimit >= 1) && (itemLimit == null || itemLimit >= 1), "a limit must be positive");
        require(storeStateUrls.isEmpty() || (storeCopies >= 1 && storeStateUrls.size() % storeCopies == 0),
                "--store-copies must divide the --store-state-url list into copy groups of the same partitions");
        long sinceMicros = sinceMicros();
        if (tillKeys != null) {
            authorization = TillKeyFile.read(tillKeys).managerAuthorization();
            require(authorization != null, "--till-keys " + tillKeys + " holds no manager key");
        }
        PurchaseTotals totals;
        try (Connection connection = DriverManager.getConnection(jdbcUrl, credentials())) {
            totals = PurchaseTotals.read(connection, sinceMicros);
        } catch (SQLException e) {
            System.err.println("[check-gets] could not read the purchases at " + jdbcUrl + ": " + e.getMessage());
            return 2;
        }
        System.out.printf(Locale.ROOT, "database: %d purchases, %d (store, item) totals%s%n", totals.purchases(),
                totals.storeItemPairs(), sinceMicros > 0 ? " since " + Instant.EPOCH.plus(sinceMicros, ChronoUnit.MICROS) : "");
        if (itemSample > 0 && itemSample < totals.items().size()) {
            System.out.printf(Locale.ROOT, "GET /items/top10/{id}: %d of the %d items sold asked, spread over their ids%n",
                    itemSample, totals.items().size());
        }
        boolean exact;
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            int storeTop = storeLimit == null ? 10 : storeLimit;
            int itemTop = itemLimit == null ? 5 : itemLimit;
            exact = check(http, "GET /items/store/{id}", "stores", "item",
                    withAbsent(totals.stores(), maxStores), id -> "/items/store/" + id + limit(storeLimit), "itemID",
                    id -> totals.topItemsAt(id, storeTop), id -> itemId -> totals.sold(id, itemId));
            exact &= check(http, "GET /items/top10/{id}", "items", "store",
                    withAbsent(spread(totals.items(), itemSample), maxItemId), id -> "/items/top10/" + id + limit(itemLimit), "storeID",
                    id -> totals.topStoresFor(id, itemTop), id -> storeId -> totals.sold(storeId, id));
            exact &= checkChain(http, totals);
            exact &= checkCopies(http, totals);
        }
        if (topItemsOut != null) {
            Files.writeString(topItemsOut, JSON.writeValueAsString(new ChainTopItems(totals.topItems(StoreQuery.MAX_LIMIT).stream()
                    .map(item -> new ItemCount(item.id(), item.quantity())).toList(), totals.purchases())));
        }
        String what = storeStateUrls.isEmpty() ? "GETs" : "GETs and every copy's counts";
        System.out.println(what + (exact ? " exact" : " NOT exact") + " against the purchases database");
        return exact ? 0 : 1;
    }

    /** {@code wanted} of {@code ids}, every step-th so that they reach from the first to the last; all when 0 or more. */
    static TreeSet<Integer> spread(TreeSet<Integer> ids, int wanted) {
        if (wanted == 0 || wanted >= ids.size()) {
            return ids;
        }
        TreeSet<Integer> taken = new TreeSet<>();
        double step = (double) ids.size() / wanted;
        int index = 0;
        for (int id : ids) {
            if (taken.size() < wanted && index++ >= taken.size() * step) {
                taken.add(id);
            }
        }
        return taken;
    }

    /** The stores or items with sales and up to {@code absentSamples} without, spread over 1..max. */
    private TreeSet<Integer> withAbsent(TreeSet<Integer> present, int max) {
        TreeSet<Integer> asked = new TreeSet<>(present);
        int absent = max - (int) present.stream().filter(id -> id >= 1 && id <= max).count();
        int wanted = Math.min(absentSamples, absent);
        if (wanted == 0) {
            return asked;
        }
        // Every step-th absent id, so the samples reach from the first id to the last.
        int step = Math.max(1, absent / wanted);
        int seen = 0;
        int taken = 0;
        for (int id = 1; id <= max && taken < wanted; id++) {
            if (!present.contains(id) && seen++ % step == 0) {
                asked.add(id);
                taken++;
            }
        }
        return asked;
    }

    private static String limit(Integer limit) {
        return limit == null ? "" : "?limit=" + limit;
    }

    /**
     * Asks {@code path(id)} for every id, {@code concurrency} at a time, compares each answer
     * with {@code expected(id)} and prints the summary line and the first mismatches; true if all
     * were exact.
     */
    private boolean check(HttpClient http, String get, String kind, String entry, TreeSet<Integer> ids,
                          IntFunction<String> path, String idField, IntFunction<List<Ranked>> expected,
                          IntFunction<IntToLongFunction> truth) throws InterruptedException {
        Semaphore inFlight = new Semaphore(concurrency);
        AtomicLong mismatches = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong nonEmpty = new AtomicLong();
        ConcurrentLinkedQueue<String> examples = new ConcurrentLinkedQueue<>();
        String base = baseUrl.toString().replaceAll("/+$", "");
        long start = System.nanoTime();
        try (ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int id : ids) {
                inFlight.acquire();
                workers.submit(() -> {
                    try {
                        String url = base + path.apply(id);
                        Answer answer = get(http, URI.create(url), "stores", idField);
                        if (answer.failure() != null) {
                            failed.incrementAndGet();
                            if (examples.size() < maxExamples) {
                                examples.add(url + ": " + answer.failure());
                            }
                            return;
                        }
                        List<Ranked> want = expected.apply(id);
                        if (!want.isEmpty()) {
                            nonEmpty.incrementAndGet();
                        }
                        AnswerComparison.difference(want, answer.entries(), entry, truth.apply(id)).ifPresent(difference -> {
                            mismatches.incrementAndGet();
                            if (examples.size() < maxExamples) {
                                examples.add(url + ": " + difference);
                            }
                        });
                    } finally {
                        inFlight.release();
                    }
                });
            }
        }
        boolean exact = mismatches.get() == 0 && failed.get() == 0;
        System.out.printf(Locale.ROOT, "%s: %d %s checked (%d with sales) in %.1f s, %d mismatches, %d failed: %s%n", get,
                ids.size(), kind, nonEmpty.get(), (System.nanoTime() - start) / 1e9, mismatches.get(), failed.get(),
                exact ? "exact" : "NOT EXACT");
        examples.forEach(example -> System.out.println("  " + example));
        return exact;
    }

    /**
     * GET /items/top (10) and /items/top?limit=1000 against the database's chain-wide top list,
     * and the purchases they report against the database's; true if both are exact.
     */
    private boolean checkChain(HttpClient http, PurchaseTotals totals) {
        boolean exact = true;
        String base = baseUrl.toString().replaceAll("/+$", "");
        for (String limit : List.of("", "?limit=" + StoreQuery.MAX_LIMIT)) {
            String url = base + "/items/top" + limit;
            List<Ranked> want = totals.topItems(limit.isEmpty() ? 10 : StoreQuery.MAX_LIMIT);
            Answer answer = get(http, URI.create(url), "items", "itemID");
            String verdict;
            if (answer.failure() != null) {
                verdict = "FAILED: " + answer.failure();
            } else {
                verdict = AnswerComparison.difference(want, answer.entries(), "item", totals::soldOverall)
                        .or(() -> answer.purchases() == totals.purchases() ? Optional.empty()
                                : Optional.of("purchases " + answer.purchases() + ", the database " + totals.purchases()))
                        .map(difference -> "NOT EXACT: " + difference).orElse("exact");
            }
            exact &= verdict.equals("exact");
            System.out.printf(Locale.ROOT, "GET /items/top%s: %d items, %d purchases: %s%n", limit, answer.entries().size(),
                    answer.purchases(), verdict);
        }
        return exact;
    }

    /** {@code GET /items/top}'s answer, as purchase-api writes it. */
    private record ChainTopItems(List<ItemCount> items, long purchases) {
    }

    private record ItemCount(int itemID, long numberOfItems) {
    }

    /** A GET's entries (and the purchases of GET /items/top), or why there are none. */
    private record Answer(List<Ranked> entries, long purchases, String failure) {
    }

    /** GETs {@code uri}, again on a 5xx or an I/O error (a busy machine), up to {@link #ATTEMPTS} times. */
    private Answer get(HttpClient http, URI uri, String listField, String idField) {
        String failure = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET();
                if (authorization != null) {
                    request.header("Authorization", authorization);
                }
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    JsonNode body = JSON.readTree(response.body());
                    return new Answer(entries(body, listField, idField), body.path("purchases").asLong(0), null);
                }
                failure = response.statusCode() + " " + response.body().strip();
                if (response.statusCode() < 500) {
                    break;
                }
            } catch (IOException | RuntimeException e) {
                failure = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Answer(List.of(), 0, "interrupted");
            }
            try {
                TimeUnit.MILLISECONDS.sleep(200L * attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Answer(List.of(), 0, "interrupted");
            }
        }
        return new Answer(List.of(), 0, failure);
    }

    /** The entries of {@code {"<listField>":[{"<idField>":N,"numberOfItems":Q}, ...]}}, in order. */
    static List<Ranked> entries(JsonNode body, String listField, String idField) {
        List<Ranked> entries = new ArrayList<>();
        for (JsonNode entry : body.required(listField)) {
            entries.add(new Ranked(entry.required(idField).asInt(), entry.required("numberOfItems").asLong()));
        }
        return entries;
    }

    /** Every copy's state summary against its partition's totals; true if all match (or none was asked). */
    private boolean checkCopies(HttpClient http, PurchaseTotals totals) {
        if (storeStateUrls.isEmpty()) {
            return true;
        }
        int partitions = storeStateUrls.size() / storeCopies;
        boolean exact = true;
        for (int copy = 0; copy < storeCopies; copy++) {
            for (int partition = 0; partition < partitions; partition++) {
                Summary want = totals.summary(partition, partitions);
                URI uri = URI.create(storeStateUrls.get(copy * partitions + partition).toString().replaceAll("/+$", "") + "/state/summary");
                String got;
                try {
                    HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(1)).GET().build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() == 200) {
                        JsonNode summary = JSON.readTree(response.body());
                        got = line(new Summary(summary.required("purchases").asLong(), summary.required("quantity").asLong(),
                                summary.required("digest").asString()));
                    } else {
                        got = "unreadable: " + response.statusCode() + " " + response.body().strip();
                    }
                } catch (IOException | RuntimeException e) {
                    got = "unreadable: " + e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    got = "unreadable: interrupted";
                }
                boolean same = got.equals(line(want));
                exact &= same;
                System.out.printf(Locale.ROOT, "copy %d, partition %d state summary: %s%n", copy, partition,
                        same ? got + ": exact" : got + ": NOT EXACT, the database gives " + line(want));
            }
        }
        return exact;
    }

    private static String line(Summary summary) {
        return "purchases " + summary.purchases() + ", quantity " + summary.quantity() + ", digest " + summary.digest();
    }

    private long sinceMicros() {
        if (since == null || since.isBlank()) {
            return 0;
        }
        if (since.chars().allMatch(Character::isDigit)) {
            return Long.parseLong(since);
        }
        try {
            return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.parse(since));
        } catch (RuntimeException e) {
            throw new ParameterException(Objects.requireNonNull(spec).commandLine(),
                    "--since must be epoch microseconds or an ISO-8601 instant: " + since);
        }
    }

    private Properties credentials() {
        Properties properties = new Properties();
        properties.setProperty("user", dbUser);
        properties.setProperty("password", dbPassword == null ? "" : dbPassword);
        properties.setProperty("connectTimeout", "5000");
        return properties;
    }

    private void require(boolean condition, String message) {
        if (!condition) {
            throw new ParameterException(Objects.requireNonNull(spec).commandLine(), message);
        }
    }
}
