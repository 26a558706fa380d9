package com.supermarket.store.durability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import com.supermarket.contract.StorePartition;
import com.supermarket.store.counts.CountsSummary;
import com.supermarket.store.counts.StoreCounts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The counts of P partitions split by store into P' new state directories, and what it refuses. */
class RepartitionTest {

    private static final int STORES = 23;
    private static final int ITEMS = 30;
    private static final int WINDOW = 64;

    @TempDir
    Path dir;

    private final Random random = new Random(51);

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"2, 4", "4, 2", "1, 3", "3, 1", "2, 8"})
    void everyStoreMovesWholeToItsNewOwnerWithItsCountsPurchasesAndDedupWindow(int from, int to) throws IOException {
        List<StoreCounts> current = partitionsWithSales(from, 1_500);
        Map<Integer, Row> before = rows(current);

        List<Repartition.Seed> seeds = Repartition.split(sources(current), to, dir.resolve("out"));

        assertThat(seeds).hasSize(to);
        Map<Integer, Row> after = new HashMap<>();
        for (Repartition.Seed seed : seeds) {
            int q = seed.partition().index();
            assertThat(seed.directory()).isEqualTo(dir.resolve("out").resolve("p" + q));
            StateDirectory directory = new StateDirectory(seed.directory());
            directory.claim(new StorePartition(q, to), 0);
            StoreCounts recovered = counts();
            Recovery.Result result = Recovery.recover(directory, recovered);
            assertThat(result.snapshot()).isZero();
            Map<Integer, Row> rows = rows(List.of(recovered));
            assertThat(rows.keySet()).as("stores of %s", seed.partition()).allMatch(seed.partition()::owns);
            CountsSummary summary = CountsSummary.of(recovered);
            assertThat(List.of(seed.tally().purchases(), seed.tally().quantity(), seed.tally().digest()))
                    .as("what the tool says of %s is what its GET /state/summary will say", seed.partition())
                    .isEqualTo(List.of(summary.purchases(), summary.quantity(), summary.digest()));
            after.putAll(rows);
        }
        assertThat(after).isEqualTo(before);
    }

    @Test
    void aPurchaseCountedBeforeTheChangeIsADuplicateAtItsNewOwner() throws IOException {
        List<StoreCounts> current = partitionsWithSales(2, 0);
        UUID counted = UUID.randomUUID();
        int store = 6; // partition 0 of 2, partition 2 of 4
        current.get(0).apply(counted, store, new int[] {3}, new int[] {5});
        for (int i = 0; i < WINDOW - 1; i++) {
            current.get(0).apply(UUID.randomUUID(), store, new int[] {4}, new int[] {1});
        }

        Repartition.split(sources(current), 4, dir);
        StoreCounts owner = counts();
        Recovery.recover(new StateDirectory(dir.resolve("p2")), owner);

        assertThat(owner.apply(counted, store, new int[] {3}, new int[] {5})).isEqualTo(StoreCounts.Outcome.DUPLICATE);
        assertThat(owner.count(store, 3)).isEqualTo(5);
        assertThat(owner.count(store, 4)).isEqualTo(WINDOW - 1);
    }

    @Test
    void aNewPartitionRefusesTheSeedOfAnotherPartitionOrPartitionCount() throws IOException {
        Repartition.split(sources(partitionsWithSales(2, 200)), 4, dir);

        assertThatThrownBy(() -> new StateDirectory(dir.resolve("p2")).claim(new StorePartition(1, 4), 0))
                .hasMessageContaining("holds the counts of store partition 2 of 4, copy 0, not of this store partition 1 of 4");
        assertThatThrownBy(() -> new StateDirectory(dir.resolve("p0")).claim(new StorePartition(0, 2), 0))
                .hasMessageContaining("partition 0 of 4, copy 0, not of this store partition 0 of 2");
        assertThatThrownBy(() -> new StateDirectory(dir.resolve("p1")).claim(new StorePartition(1, 4), 1))
                .hasMessageContaining("not of this store partition 1 of 4, copy 1");
    }

    @Test
    void aSeedWhoseWritingStoppedBeforeItsMarkIsRefusedNotStartedFromZero() throws IOException {
        Repartition.split(sources(partitionsWithSales(2, 200)), 4, dir);
        StateDirectory complete = new StateDirectory(dir.resolve("p1"));
        Files.delete(dir.resolve("p1").resolve("partition"));
        StateDirectory beforeItsSnapshot = new StateDirectory(dir.resolve("p2"));
        Files.delete(dir.resolve("p2").resolve("partition"));
        Files.move(beforeItsSnapshot.snapshot(0), beforeItsSnapshot.snapshotInProgress(0));

        assertThatThrownBy(() -> complete.claim(new StorePartition(1, 4), 0)).hasMessageContaining("partition 0 of 1, copy 0");
        assertThatThrownBy(() -> beforeItsSnapshot.claim(new StorePartition(2, 4), 0))
                .hasMessageContaining("partition 0 of 1, copy 0");
    }

    @Test
    void aPartitionGivenNoStoreGetsAnEmptySnapshotMarkedAsItsOwn() throws IOException {
        StoreCounts only = counts();
        only.apply(UUID.randomUUID(), 2, new int[] {1}, new int[] {1});

        Repartition.split(List.of(source(only, new StorePartition(0, 1))), 2, dir);

        StoreCounts recovered = counts();
        Recovery.recover(new StateDirectory(dir.resolve("p1")), recovered);
        assertThat(recovered.purchases()).isZero();
        assertThat(Files.readString(dir.resolve("p1").resolve("partition"))).isEqualTo("1 of 2, copy 0\n");
    }

    @Test
    void sourcesMustBeEveryCurrentPartitionOnce() throws IOException {
        List<StoreCounts> current = partitionsWithSales(3, 100);
        List<Repartition.Source> all = sources(current);

        assertThatThrownBy(() -> Repartition.split(all.subList(0, 2), 2, dir.resolve("a")))
                .hasMessageContaining("no source for store partition(s) [2] of 3");
        assertThatThrownBy(() -> Repartition.split(List.of(all.get(0), all.get(1), all.get(1)), 2, dir.resolve("b")))
                .hasMessageContaining("are both store partition 1 of 3");
        Repartition.Source otherCount = source(current.get(0), new StorePartition(0, 2));
        assertThatThrownBy(() -> Repartition.split(List.of(all.get(0), otherCount), 2, dir.resolve("c")))
                .hasMessageContaining("is store partition 0 of 2 but");
    }

    @Test
    void aSourceHoldingAStoreOfAnotherPartitionIsRefused() throws IOException {
        List<StoreCounts> current = partitionsWithSales(2, 100);
        List<Repartition.Source> swapped = List.of(source(current.get(0), new StorePartition(1, 2)),
                source(current.get(1), new StorePartition(0, 2)));

        assertThatThrownBy(() -> Repartition.split(swapped, 4, dir))
                .hasMessageContaining("says it is store partition 1 of 2 but holds store");
    }

    @Test
    void aStateDirectoryAlreadyThereIsNotOverwritten() throws IOException {
        Files.createDirectories(dir.resolve("p1"));
        Files.writeString(dir.resolve("p1").resolve("partition"), "1 of 4, copy 0\n");

        assertThatThrownBy(() -> Repartition.split(sources(partitionsWithSales(2, 50)), 4, dir))
                .hasMessageContaining("p1 is not empty");
    }

    @Test
    void theCommandTakesEachPartitionsSnapshotOverHttpAndWritesTheNewDirectories() throws Exception {
        List<StoreCounts> current = partitionsWithSales(2, 400);
        List<HttpServer> servers = new ArrayList<>();
        try {
            List<String> urls = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                HttpServer server = serve(current.get(p), new StorePartition(p, 2), new AtomicReference<>(current.get(p)));
                servers.add(server);
                urls.add("http://127.0.0.1:" + server.getAddress().getPort());
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();

            int status = run(out, err, "--partitions", "4", "--out", dir.resolve("seeds").toString(), urls.get(1), urls.get(0));

            assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("wrote store partition 3 of 4 to")
                    .contains("repartitioned 2 -> 4 partition(s): " + (current.get(0).purchases() + current.get(1).purchases())
                            + " purchases");
            try (var files = Files.list(dir.resolve("seeds"))) {
                assertThat(files.map(f -> f.getFileName().toString())).containsExactlyInAnyOrder("p0", "p1", "p2", "p3");
            }
        } finally {
            servers.forEach(server -> server.stop(0));
        }
    }

    @Test
    void countsThatMoveWhileTheyAreTakenFailTheCommandAndLeaveNothing() throws Exception {
        List<StoreCounts> current = partitionsWithSales(1, 100);
        AtomicReference<StoreCounts> summarised = new AtomicReference<>(current.getFirst());
        HttpServer server = serve(current.getFirst(), new StorePartition(0, 1), summarised);
        try {
            StoreCounts moved = partitionsWithSales(1, 101).getFirst();
            summarised.set(moved);
            ByteArrayOutputStream err = new ByteArrayOutputStream();

            int status = run(new ByteArrayOutputStream(), err, "--partitions", "2", "--out", dir.toString(),
                    "http://127.0.0.1:" + server.getAddress().getPort());

            assertThat(status).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("changed since its snapshot")
                    .contains("purchases are still arriving");
            try (var files = Files.list(dir)) {
                assertThat(files).isEmpty();
            }
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aCopyThatCannotGiveItsCountsFailsTheCommandWithItsReason() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/state/snapshot", exchange -> {
            byte[] body = "{\"state\":\"draining\",\"reason\":\"its shard queue 'q' holds 3 ready message(s)\"}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(503, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            ByteArrayOutputStream err = new ByteArrayOutputStream();

            int status = run(new ByteArrayOutputStream(), err, "--partitions", "2", "--out", dir.resolve("x").toString(),
                    "http://127.0.0.1:" + server.getAddress().getPort());

            assertThat(status).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("answered 503").contains("holds 3 ready message(s)");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void usageMistakesExitTwo() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        assertThat(run(new ByteArrayOutputStream(), err, "--partitions", "4")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--partitions, --out and at least one URL are required")
                .contains("Usage: store-service repartition");
    }

    private static int run(OutputStream out, OutputStream err, String... args) {
        return Repartition.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** A stand-in for a store-service's /state endpoints: {@code counts}' snapshot, {@code summarised}'s summary. */
    private static HttpServer serve(StoreCounts counts, StorePartition partition, AtomicReference<StoreCounts> summarised)
            throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/state/snapshot", exchange -> {
            exchange.getResponseHeaders().add(StateController.PARTITION_HEADER, StateDirectory.mark(partition, 0));
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream body = exchange.getResponseBody()) {
                Snapshots.write(Channels.newChannel(body), 0, counts, () -> 0);
            }
        });
        server.createContext("/state/summary", exchange -> {
            CountsSummary summary = CountsSummary.of(summarised.get());
            byte[] body = ("{\"partition\":" + partition.index() + ",\"partitions\":" + partition.partitions()
                    + ",\"copy\":0,\"purchases\":" + summary.purchases() + ",\"quantity\":" + summary.quantity()
                    + ",\"digest\":\"" + summary.digest() + "\"}").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        return server;
    }

    /** P partitions' counts of {@code purchases} random purchases, each counted by its store's owner. */
    private List<StoreCounts> partitionsWithSales(int partitions, int purchases) {
        List<StoreCounts> counts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            counts.add(counts());
        }
        Random sales = new Random(random.nextLong());
        for (int i = 0; i < purchases; i++) {
            int store = 1 + sales.nextInt(STORES);
            int lines = 1 + sales.nextInt(4);
            int[] items = new int[lines];
            int[] quantities = new int[lines];
            for (int line = 0; line < lines; line++) {
                items[line] = 1 + sales.nextInt(ITEMS);
                quantities[line] = 1 + sales.nextInt(5);
            }
            counts.get(StorePartition.ownerOf(store, partitions)).apply(UUID.randomUUID(), store, items, quantities);
        }
        return counts;
    }

    private List<Repartition.Source> sources(List<StoreCounts> partitions) throws IOException {
        List<Repartition.Source> sources = new ArrayList<>();
        for (int p = 0; p < partitions.size(); p++) {
            sources.add(source(partitions.get(p), new StorePartition(p, partitions.size())));
        }
        return sources;
    }

    /** {@code counts} as the snapshot a store-service streams from {@code GET /state/snapshot}, said to be {@code partition}'s. */
    private Repartition.Source source(StoreCounts counts, StorePartition partition) throws IOException {
        Path file = Files.createTempFile(dir, "source-", ".snap");
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            Snapshots.write(out, 0, counts, () -> 0);
        }
        return new Repartition.Source(file.toString(), partition, file);
    }

    private static StoreCounts counts() {
        return new StoreCounts(STORES, ITEMS, WINDOW);
    }

    /** One store's saved state, comparable. */
    private record Row(List<Integer> counts, long purchases, List<UUID> recentIds) {
    }

    private static Map<Integer, Row> rows(List<StoreCounts> partitions) {
        Map<Integer, Row> rows = new HashMap<>();
        for (StoreCounts counts : partitions) {
            counts.snapshotTo((storeId, itemCounts, purchases, recentIds) -> assertThat(rows.put(storeId,
                    new Row(Arrays.stream(itemCounts).boxed().toList(), purchases, recentIds))).as("store %d once", storeId).isNull());
        }
        return rows;
    }
}
