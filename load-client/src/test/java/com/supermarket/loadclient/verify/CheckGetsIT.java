package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.supermarket.broker.testing.TestServices;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * {@code check-gets} against a real MariaDB holding purchases-service's schema (its own
 * migrations, applied in order) and a fake purchase-api and store-service whose answers were
 * worked out by hand from the purchases below: the exact answers pass, an answer one off or with
 * a tie broken the wrong way fails, and purchases from before {@code --since} are left out.
 */
class CheckGetsIT {

    private static final long SINCE = 1_700_000_000_000_000L;
    private static final String DATABASE = "check_gets_it_" + Long.toHexString(System.nanoTime());

    /** The answers that are exact for the purchases inserted in {@link #purchases()}. */
    private static final Map<String, String> EXACT = Map.of(
            "/items/store/1", "{\"stores\":[{\"itemID\":101,\"numberOfItems\":3},{\"itemID\":202,\"numberOfItems\":1},"
                    + "{\"itemID\":303,\"numberOfItems\":1}]}",
            "/items/store/2", "{\"stores\":[{\"itemID\":101,\"numberOfItems\":3},{\"itemID\":202,\"numberOfItems\":1}]}",
            "/items/store/3", "{\"stores\":[{\"itemID\":202,\"numberOfItems\":5}]}",
            "/items/top10/101", "{\"stores\":[{\"storeID\":1,\"numberOfItems\":3},{\"storeID\":2,\"numberOfItems\":3}]}",
            "/items/top10/202", "{\"stores\":[{\"storeID\":3,\"numberOfItems\":5},{\"storeID\":1,\"numberOfItems\":1},"
                    + "{\"storeID\":2,\"numberOfItems\":1}]}",
            "/items/top10/303", "{\"stores\":[{\"storeID\":1,\"numberOfItems\":1}]}",
            "/items/top", "{\"items\":[{\"itemID\":202,\"numberOfItems\":7},{\"itemID\":101,\"numberOfItems\":6},"
                    + "{\"itemID\":303,\"numberOfItems\":1}],\"purchases\":4}");

    private static String jdbcUrl;
    private static TestServices.Database server;
    private static HttpServer api;
    /** What the fake answers instead of {@link #EXACT}, by path. */
    private static final Map<String, String> wrong = new ConcurrentHashMap<>();
    private static final Map<String, String> summaries = new ConcurrentHashMap<>();
    /** The Authorization header of every request the fake received. */
    private static final java.util.Queue<String> authorizations = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @BeforeAll
    static void schemaAndPurchases() throws Exception {
        server = TestServices.mariaDb();
        try (Connection admin = DriverManager.getConnection(server.jdbcUrl(""), server.username(), server.password());
             Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + DATABASE);
        }
        jdbcUrl = server.jdbcUrl(DATABASE);
        try (Connection connection = DriverManager.getConnection(jdbcUrl + "?allowMultiQueries=true", server.username(),
                server.password())) {
            // purchases-service's own migrations, so the check's SQL meets the schema the service writes.
            try (Stream<Path> files = Files.list(Path.of("../purchases-service/src/main/resources/db/migration"))) {
                for (Path migration : files.sorted((a, b) -> version(a) - version(b)).toList()) {
                    try (Statement statement = connection.createStatement()) {
                        boolean results = statement.execute(Files.readString(migration));
                        while (results || statement.getUpdateCount() != -1) { // every statement of the file ran
                            results = statement.getMoreResults();
                        }
                    }
                }
            }
            purchases(connection);
        }
        api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        api.createContext("/", CheckGetsIT::answer);
        api.start();
    }

    private static int version(Path migration) {
        String name = migration.getFileName().toString();
        return Integer.parseInt(name.substring(1, name.indexOf("__")));
    }

    /** Four purchases since {@link #SINCE} and one before it, of stores 1..3. */
    private static void purchases(Connection connection) throws SQLException {
        insert(connection, 1, SINCE, "[[101,2],[202,1]]");
        insert(connection, 1, SINCE + 5, "[[101,1],[303,1]]");
        insert(connection, 2, SINCE + 9, "[[202,1],[101,3]]");
        insert(connection, 3, SINCE + 9, "[[202,5]]");
        insert(connection, 1, SINCE - 1, "[[999,50]]");
    }

    private static void insert(Connection connection, int store, long acceptedAtMicros, String items) throws SQLException {
        UUID id = UUID.randomUUID();
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO purchase (purchase_id, store_id, customer_id, "
                + "purchase_date, accepted_at_us, item_count, items) VALUES (?, ?, ?, '2021-01-01', ?, 1, ?)")) {
            insert.setBytes(1, ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array());
            insert.setInt(2, store);
            insert.setInt(3, store * 1000);
            insert.setLong(4, acceptedAtMicros);
            insert.setString(5, items);
            insert.executeUpdate();
        }
    }

    private static void answer(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        authorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
        String body = summaries.containsKey(path) ? summaries.get(path)
                : wrong.getOrDefault(path, EXACT.getOrDefault(path, "{\"stores\":[]}"));
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @AfterAll
    static void stop() throws SQLException {
        if (api != null) {
            api.stop(0);
        }
        try (Connection connection = DriverManager.getConnection(jdbcUrl, server.username(), server.password());
             Statement statement = connection.createStatement()) {
            statement.execute("DROP DATABASE " + DATABASE);
        }
    }

    @BeforeEach
    void exactAnswers() {
        wrong.clear();
        summaries.clear();
        authorizations.clear();
    }

    @Test
    void exactAnswersPass() {
        CommandOutcome outcome = checkGets();

        assertThat(outcome.status()).as(outcome.toString()).isZero();
        assertThat(outcome.out()).contains("database: 4 purchases, 6 (store, item) totals since 2023-11-14T22:13:20Z")
                .containsPattern("GET /items/store/\\{id}: 5 stores checked \\(3 with sales\\) in [0-9.]+ s, 0 mismatches, 0 failed: exact")
                .containsPattern("GET /items/top10/\\{id}: 5 items checked \\(3 with sales\\) in [0-9.]+ s, 0 mismatches, 0 failed: exact")
                .contains("GET /items/top: 3 items, 4 purchases: exact", "GET /items/top?limit=1000: 3 items, 4 purchases: exact")
                .endsWith("GETs exact against the purchases database\n");
        assertThat(authorizations).as("no key without --till-keys").containsOnly("null");
    }

    @Test
    void theChainsTopItemsAreCheckedWithThePurchasesCounted() {
        wrong.put("/items/top", "{\"items\":[{\"itemID\":202,\"numberOfItems\":7},{\"itemID\":101,\"numberOfItems\":6}],"
                + "\"purchases\":4}");
        CommandOutcome missing = checkGets();
        wrong.put("/items/top", EXACT.get("/items/top").replace("\"purchases\":4", "\"purchases\":5"));
        CommandOutcome purchases = checkGets();

        assertThat(missing.status()).isEqualTo(1);
        assertThat(missing.out()).contains("GET /items/top: 2 items, 4 purchases: NOT EXACT: 2 entries, expected 3: missing item 303 x 1");
        assertThat(purchases.status()).isEqualTo(1);
        assertThat(purchases.out()).contains("GET /items/top: 3 items, 5 purchases: NOT EXACT: purchases 5, the database 4");
    }

    @Test
    void theManagerKeyIsSentAndTheDatabasesTopItemsWritten(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path keys = Files.writeString(dir.resolve("till-keys.txt"), "# scope key label\n1 tk_store_one till-1\nmanager tk_the_manager boss\n");
        Path expected = dir.resolve("top-items.json");

        CommandOutcome outcome = checkGets("--till-keys", keys.toString(), "--top-items-out", expected.toString());

        assertThat(outcome.status()).as(outcome.toString()).isZero();
        assertThat(authorizations).isNotEmpty().containsOnly("Bearer tk_the_manager");
        assertThat(Files.readString(expected)).isEqualTo(EXACT.get("/items/top"));
    }

    @Test
    void aCountOneOffIsFound() {
        wrong.put("/items/top10/101", "{\"stores\":[{\"storeID\":1,\"numberOfItems\":3},{\"storeID\":2,\"numberOfItems\":4}]}");

        CommandOutcome outcome = checkGets();

        assertThat(outcome.status()).isEqualTo(1);
        assertThat(outcome.out()).containsPattern("GET /items/top10/\\{id}: 5 items checked \\(3 with sales\\) in [0-9.]+ s, 1 mismatches, 0 failed: NOT EXACT")
                .contains("/items/top10/101: #2 store 2 has 4, the database 3")
                .endsWith("GETs NOT exact against the purchases database\n");
    }

    @Test
    void aTieBrokenTheWrongWayAndAPurchaseFromBeforeTheRunAreFound() {
        wrong.put("/items/top10/101", "{\"stores\":[{\"storeID\":2,\"numberOfItems\":3},{\"storeID\":1,\"numberOfItems\":3}]}");

        CommandOutcome outcome = checkGets();

        assertThat(outcome.status()).isEqualTo(1);
        assertThat(outcome.out()).contains("/items/top10/101: #1 is store 2, expected store 1 with the same 3: a tie goes to the lower id");
        // Without --since the purchase of item 999 from before counts, and the API (which never counted it) is short of it.
        CommandOutcome everything = CommandOutcome.run("check-gets", "--jdbc-url", jdbcUrl, "--db-user", server.username(),
                "--db-password", server.password(), "--base-url", url(""), "--max-stores", "5", "--max-item-id", "1000", "--absent-samples", "0");
        assertThat(everything.status()).isEqualTo(1);
        assertThat(everything.out()).contains("/items/store/1: #1 is item 101 x 3, expected item 999 x 50");
    }

    @Test
    void everyCopysStateSummaryIsCheckedAgainstItsPartition() {
        // Two partitions: stores 2 (even) and 1, 3 (odd).
        summaries.put("/c0p0/state/summary", summary(1, 4, PurchaseTotalsTest.digest(2, 101, 3, 2, 202, 1)));
        String odd = summary(3, 10, PurchaseTotalsTest.digest(1, 101, 3, 1, 202, 1, 1, 303, 1, 3, 202, 5));
        summaries.put("/c0p1/state/summary", odd);
        summaries.put("/c1p0/state/summary", summary(1, 4, PurchaseTotalsTest.digest(2, 101, 3, 2, 202, 1)));
        summaries.put("/c1p1/state/summary", odd);
        String[] copies = {"--store-copies", "2", "--store-state-url", url("/c0p0"), "--store-state-url", url("/c0p1"),
                "--store-state-url", url("/c1p0"), "--store-state-url", url("/c1p1")};

        CommandOutcome exact = checkGets(copies);
        summaries.put("/c1p1/state/summary", summary(4, 11, PurchaseTotalsTest.digest()));
        CommandOutcome counted = checkGets(copies);

        assertThat(exact.status()).as(exact.toString()).isZero();
        assertThat(exact.out()).contains("copy 1, partition 1 state summary: purchases 3, quantity 10, digest ")
                .endsWith("GETs and every copy's counts exact against the purchases database\n");
        assertThat(counted.status()).isEqualTo(1);
        assertThat(counted.out()).contains("copy 0, partition 1 state summary: purchases 3, quantity 10")
                .contains("copy 1, partition 1 state summary: purchases 4, quantity 11, digest 0000000000000000: NOT EXACT, "
                        + "the database gives purchases 3, quantity 10");
    }

    @Test
    void theDynamoDbProfileIsRefused() {
        CommandOutcome outcome = CommandOutcome.run("check-gets", "--profile", "dynamodb");

        assertThat(outcome.status()).isEqualTo(2);
        assertThat(outcome.err()).contains("the dynamodb profile is not supported");
    }

    private static String summary(long purchases, long quantity, String digest) {
        return "{\"purchases\":" + purchases + ",\"quantity\":" + quantity + ",\"digest\":\"" + digest + "\"}";
    }

    private static String url(String path) {
        return "http://127.0.0.1:" + api.getAddress().getPort() + path;
    }

    private static CommandOutcome checkGets(String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("check-gets", "--jdbc-url", jdbcUrl, "--db-user",
                server.username(), "--db-password", server.password(), "--since", Long.toString(SINCE),
                "--base-url", url(""), "--max-stores", "5", "--max-item-id", "1000", "--absent-samples", "2"));
        args.addAll(List.of(more));
        return CommandOutcome.run(args.toArray(String[]::new));
    }
}
