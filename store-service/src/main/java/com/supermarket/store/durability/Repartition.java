package com.supermarket.store.durability;

import com.supermarket.contract.CountsDigest;
import com.supermarket.contract.StorePartition;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.FileSystemUtils;

/**
 * {@code store-service repartition}: the counts of every store partition of a running install,
 * split into the state directories of another partition count, so a change of
 * {@code STORE_PARTITIONS} keeps every count exact (docs/operations.md, "Store partitions and
 * copies").
 *
 * <p>It asks one copy of each current partition for {@code GET /state/snapshot}
 * ({@link StateController}), which answers only while that copy's shard queues hold no ready
 * message, and checks by the {@value StateController#PARTITION_HEADER} header that the answers are
 * partitions 0..P-1 of one P, once each. Every store's row moves whole, unchanged, to the new
 * partition that owns it ({@link StorePartition#ownerOf}): its counts, its purchases and its
 * dedup window, so a purchase counted before the change and delivered again after it is skipped
 * by its new owner as it would have been by its old one. New partition {@code q} gets a state
 * directory {@code <out>/p<q>} that is indistinguishable from one it wrote itself: marked
 * {@code "q of P', copy 0"} (last), an empty log segment 0 and snapshot 0. Started on it, partition q
 * recovers it; any other partition or partition count refuses it ({@link StateDirectory#claim}).
 * Then it asks each source for {@code GET /state/summary} again: counts that changed since their
 * snapshot (purchases still arriving) fail the command and remove what it wrote.
 *
 * <p>Not thread-safe; one run per process.
 */
public final class Repartition {

    /** The first argument of {@code store-service} that runs this command instead of the service. */
    public static final String COMMAND = "repartition";

    private static final Pattern MARK = Pattern.compile("(\\d+) of (\\d+), copy (\\d+)");
    private static final String USAGE = """
            Usage: store-service repartition --partitions P --out DIR [--timeout DURATION] URL...
            Splits the counts of every current store partition into state directories for P partitions.
              URL              base URL (server port) of one copy of each current partition, e.g.
                               http://127.0.0.1:8081; every partition 0..P_now-1 exactly once
              --partitions P   the new partition count (STORE_PARTITIONS); it must divide the storeX shard count
              --out DIR        where the new state directories go, DIR/p0 .. DIR/p<P-1>; new or empty
              --timeout D      per request, ISO-8601 or e.g. 10m (default 10m)
            First stop purchase-api and wait until every storeX shard queue is empty (docs/operations.md,
            "Store partitions and copies"). Exit 0 written, 1 refused or failed, 2 usage.
            """;

    private Repartition() {
    }

    /** The sums of some stores' rows, as {@code GET /state/summary} gives them; not thread-safe. */
    static final class Tally {

        private final CountsDigest digest = new CountsDigest();
        private int stores;
        private long purchases;
        private long quantity;

        void add(Snapshots.Row row) {
            stores++;
            purchases += row.purchases();
            int[] counts = row.counts();
            for (int item = 0; item < counts.length; item++) {
                quantity += counts[item];
                digest.add(row.storeId(), item + 1, counts[item]);
            }
        }

        int stores() {
            return stores;
        }

        long purchases() {
            return purchases;
        }

        long quantity() {
            return quantity;
        }

        String digest() {
            return digest.hex();
        }

        @Override
        public String toString() {
            return stores + " stores, " + purchases + " purchases, " + quantity + " units, digest " + digest();
        }
    }

    /**
     * One current partition's counts.
     *
     * @param name      where they came from, for messages
     * @param partition whose they are
     * @param snapshot  a complete snapshot numbered 0 ({@link Snapshots})
     * @param tally     filled by {@link #split} with what the snapshot holds
     */
    record Source(String name, StorePartition partition, Path snapshot, Tally tally) {

        Source(String name, StorePartition partition, Path snapshot) {
            this(name, partition, snapshot, new Tally());
        }
    }

    /**
     * One new partition's state directory.
     *
     * @param partition whose it is
     * @param directory where it is
     * @param tally     what it holds
     */
    record Seed(StorePartition partition, Path directory, Tally tally) {
    }

    /**
     * Writes the state directories {@code out/p0 .. out/p<partitions-1>} of the counts of
     * {@code sources}, store by store to its owner among {@code partitions} partitions.
     *
     * @throws IllegalArgumentException if the sources are not every partition of one count once
     *                                  each, a source holds a store of another partition, or the
     *                                  sources were written for different store and item ranges
     * @throws IllegalStateException    if a directory to write exists and is not empty
     */
    static List<Seed> split(List<Source> sources, int partitions, Path out) throws IOException {
        requireEveryPartitionOnce(sources);
        if (partitions < 1) {
            throw new IllegalArgumentException("the new partition count must be at least 1: " + partitions);
        }
        List<Seed> seeds = new ArrayList<>();
        for (int q = 0; q < partitions; q++) {
            Path directory = out.resolve("p" + q);
            if (Files.isDirectory(directory) && !isEmpty(directory)) {
                throw new IllegalStateException(directory + " is not empty: give the new state directories a new place");
            }
            seeds.add(new Seed(new StorePartition(q, partitions), directory, new Tally()));
        }
        Snapshots.Writer[] writers = new Snapshots.Writer[partitions];
        FileChannel[] files = new FileChannel[partitions];
        Snapshots.Header[] ranges = {null};
        try {
            for (Source source : sources) {
                Snapshots.read(source.snapshot(), 0, header -> {
                    if (ranges[0] == null) {
                        ranges[0] = header;
                        return null;
                    }
                    return header.maxStores() == ranges[0].maxStores() && header.maxItemId() == ranges[0].maxItemId() ? null
                            : "it was written for " + header.maxStores() + " stores x " + header.maxItemId() + " items, "
                              + sources.getFirst().name() + "'s for " + ranges[0].maxStores() + " x " + ranges[0].maxItemId()
                              + " (PLATFORM_MAX_STORES, PLATFORM_MAX_ITEM_ID must be the same everywhere)";
                }, (storeId, payload) -> {
                    if (!source.partition().owns(storeId)) {
                        throw new IllegalArgumentException(source.name() + " says it is " + source.partition()
                                + " but holds store " + storeId + " of " + new StorePartition(
                                StorePartition.ownerOf(storeId, source.partition().partitions()), source.partition().partitions()));
                    }
                    Snapshots.Row row = Snapshots.Row.read(payload);
                    source.tally().add(row);
                    int q = StorePartition.ownerOf(storeId, partitions);
                    seeds.get(q).tally().add(row);
                    writer(q, seeds, writers, files, ranges[0]).copy(payload);
                });
            }
            for (int q = 0; q < partitions; q++) {
                Seed seed = seeds.get(q);
                // A partition given no store gets an empty snapshot: its directory still says whose it is.
                writer(q, seeds, writers, files, ranges[0]).finish();
                files[q].close();
                StateDirectory directory = new StateDirectory(seed.directory());
                directory.installFirstSnapshot(directory.snapshotInProgress(0));
                // Last: a directory without its mark but with files is refused by every partition
                // count but 1 (taken for one from before partitions), never started from zero.
                directory.writeMark(seed.partition(), 0);
            }
        } finally {
            for (FileChannel file : files) {
                if (file != null && file.isOpen()) {
                    file.close();
                }
            }
        }
        return seeds;
    }

    private static Snapshots.Writer writer(int q, List<Seed> seeds, Snapshots.Writer[] writers, FileChannel[] files,
                                           Snapshots.Header ranges) throws IOException {
        if (writers[q] == null) {
            Seed seed = seeds.get(q);
            StateDirectory directory = new StateDirectory(seed.directory());
            directory.prepare();
            files[q] = FileChannel.open(directory.snapshotInProgress(0), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            writers[q] = new Snapshots.Writer(files[q], new Snapshots.Header(ranges.maxStores(), ranges.maxItemId(), 0));
        }
        return writers[q];
    }

    private static void requireEveryPartitionOnce(List<Source> sources) {
        if (sources.isEmpty()) {
            throw new IllegalArgumentException("no source: name one copy of every current partition");
        }
        int partitions = sources.getFirst().partition().partitions();
        Source[] byIndex = new Source[partitions];
        for (Source source : sources) {
            StorePartition partition = source.partition();
            if (partition.partitions() != partitions) {
                throw new IllegalArgumentException(source.name() + " is " + partition + " but " + sources.getFirst().name()
                        + " is " + sources.getFirst().partition() + ": every source must be of the current partition count");
            }
            if (byIndex[partition.index()] != null) {
                throw new IllegalArgumentException(source.name() + " and " + byIndex[partition.index()].name() + " are both "
                        + partition + ": name one copy of each partition");
            }
            byIndex[partition.index()] = source;
        }
        List<Integer> missing = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            if (byIndex[p] == null) {
                missing.add(p);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("no source for store partition(s) " + missing + " of " + partitions
                    + ": their stores' counts would be lost; name one copy of every current partition");
        }
    }

    /** Runs the command; returns its exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Integer partitions = null;
        Path target = null;
        Duration timeout = Duration.ofMinutes(10);
        List<String> urls = new ArrayList<>();
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "-h", "--help" -> {
                        out.print(USAGE);
                        return 0;
                    }
                    case "--partitions" -> partitions = Integer.valueOf(value(args, ++i));
                    case "--out" -> target = Path.of(value(args, ++i));
                    case "--timeout" -> timeout = DurationStyle.detectAndParse(value(args, ++i));
                    default -> {
                        if (args[i].startsWith("-")) {
                            throw new IllegalArgumentException("unknown option " + args[i]);
                        }
                        urls.add(args[i].replaceAll("/+$", ""));
                    }
                }
            }
            if (partitions == null || target == null || urls.isEmpty()) {
                throw new IllegalArgumentException("--partitions, --out and at least one URL are required");
            }
        } catch (IllegalArgumentException e) {
            err.println("store-service repartition: " + e.getMessage());
            err.print(USAGE);
            return 2;
        }
        try {
            if (Files.isDirectory(target) && !isEmpty(target)) {
                throw new IllegalStateException(target + " is not empty: give the new state directories a new place");
            }
            Path downloads = target.resolve("sources");
            List<Source> sources = new ArrayList<>();
            List<Seed> seeds;
            try {
                Files.createDirectories(downloads);
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
                for (int i = 0; i < urls.size(); i++) {
                    sources.add(fetch(http, urls.get(i), downloads.resolve("source-" + i + ".snap"), timeout));
                }
                seeds = split(sources, partitions, target);
                for (Source source : sources) {
                    requireUnchanged(source, get(http, URI.create(source.name() + "/state/summary"), timeout));
                }
            } catch (IOException | InterruptedException | RuntimeException e) {
                for (int q = 0; q < partitions; q++) {
                    FileSystemUtils.deleteRecursively(target.resolve("p" + q));
                }
                throw e;
            } finally {
                FileSystemUtils.deleteRecursively(downloads);
            }
            for (Source source : sources) {
                out.println("took " + source.partition() + " from " + source.name() + ": " + source.tally());
            }
            long purchases = 0;
            long quantity = 0;
            for (Seed seed : seeds) {
                purchases += seed.tally().purchases();
                quantity += seed.tally().quantity();
                out.println("wrote " + seed.partition() + " to " + seed.directory() + ": " + seed.tally());
            }
            out.println("repartitioned " + sources.size() + " -> " + partitions + " partition(s): " + purchases + " purchases, "
                    + quantity + " units; each new partition's GET /state/summary must give the figures written above");
            return 0;
        } catch (IOException | RuntimeException e) {
            err.println("store-service repartition: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("store-service repartition: interrupted");
            return 1;
        }
    }

    /** Refuses the counts taken from {@code source} if its summary {@code now} is not what they add up to. */
    private static void requireUnchanged(Source source, String now) {
        Tally taken = source.tally();
        if (!field(now, "purchases").equals(Long.toString(taken.purchases()))
                || !field(now, "quantity").equals(Long.toString(taken.quantity()))
                || !field(now, "digest").equals(taken.digest())) {
            throw new IllegalStateException("the counts of " + source.name() + " changed since its snapshot (" + taken
                    + "; now " + now.strip() + "): purchases are still arriving. Stop purchase-api, wait until every "
                    + "storeX shard queue is empty, and run this again");
        }
    }

    private static Source fetch(HttpClient http, String url, Path file, Duration timeout)
            throws IOException, InterruptedException {
        URI uri = URI.create(url + "/state/snapshot");
        HttpResponse<Path> response = http.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.ofFile(file));
        if (response.statusCode() != 200) {
            throw new IllegalStateException(uri + " answered " + response.statusCode() + ": "
                    + Files.readString(file, StandardCharsets.UTF_8).strip());
        }
        String mark = response.headers().firstValue(StateController.PARTITION_HEADER).orElse("");
        Matcher matcher = MARK.matcher(mark);
        if (!matcher.matches()) {
            throw new IllegalStateException(uri + " did not say whose counts it gave (" + StateController.PARTITION_HEADER
                    + ": '" + mark + "'): upgrade it to a store-service that does");
        }
        return new Source(url, new StorePartition(Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2))), file);
    }

    private static String get(HttpClient http, URI uri, Duration timeout) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(uri + " answered " + response.statusCode() + ": " + response.body().strip());
        }
        return response.body();
    }

    /** A number or string field of a flat JSON object ({@code GET /state/summary}), or "" if absent. */
    static String field(String json, String name) {
        Matcher matcher = Pattern.compile("\"" + name + "\"\\s*:\\s*\"?([^\",}]*)").matcher(json);
        return matcher.find() ? matcher.group(1).strip() : "";
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    private static boolean isEmpty(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.findAny().isEmpty();
        }
    }
}
