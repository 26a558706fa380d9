package com.supermarket.loadclient.verify;

import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunResult;

import tools.jackson.databind.json.JsonMapper;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code verify}: the exactly-once check of a run ({@link ExactlyOnce}), from the run's result
 * files and the services' public counts, after waiting for the pipeline to drain. The one place
 * the rule is written; the scripts call it. Picocli fills the fields; not thread-safe.
 */
@Command(name = "verify", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        description = {
                "Checks that every purchase the API accepted was stored once by purchases-service and counted once",
                "by store-service. Waits while the services make progress (purchases-service's purchases_stored_total",
                "and store-service's store_purchases_counted), until store-service has counted at least the accepted",
                "purchases and nothing moved for one poll, or nothing moved for --idle-timeout; then reads",
                "purchases-service's GET /purchases/count and prints one line:",
                "  N accepted, M maybe-accepted, S stored, C counted: L lost, D duplicated",
                "The rule counts purchases (Idempotency-Keys), not attempts: A accepted = some attempt got a 201;",
                "M maybe-accepted = no 201, but some attempt got a 5xx, a timeout or a lost connection (these promise",
                "nothing either way); S stored and C counted since the run began (--baseline). purchases-service's",
                "primary key cannot hold a purchase twice, so what got through is E = min(max(S, A), A + M), and",
                "  lost       = (A - S)+ + (E - C)+",
                "  duplicated = (S - (A + M))+ + (C - E)+",
                "A till's retries and late re-sends of one purchase are that one purchase. Several result files add up.",
                "With --store-copies C > 1 every copy group is checked on its own (one line each, 'copy c: ...'), and",
                "with --store-state-url the copies of every partition must also agree on their GET /state/summary.",
                "Exit status: 0 when nothing was lost or duplicated, 1 when something was, 2 on bad usage or when a",
                "result file or a service's count could not be read." })
public final class VerifyCommand implements Callable<Integer> {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * The services' counts before a run, to subtract from theirs after it.
     *
     * @param counted        copy group 0's
     * @param countedByCopy  every copy group's, copy by copy; null in a file written before copies
     */
    record Baseline(long stored, long counted, List<Long> countedByCopy) {

        /** Copy group {@code copy}'s count (a file from before copies: every copy had {@code counted}). */
        long counted(int copy) {
            return countedByCopy == null || copy >= countedByCopy.size() ? counted : countedByCopy.get(copy);
        }
    }

    @Spec
    private CommandSpec spec;

    @Parameters(arity = "0..*", paramLabel = "RESULT.json", description = "Result files written by 'run --out'.")
    private List<Path> results = new ArrayList<>();

    @Option(names = "--purchases-url", description = "purchases-service's base URL (GET /purchases/count).")
    private URI purchasesUrl = URI.create("http://127.0.0.1:8082");

    @Option(names = "--purchases-metrics-url", description = "purchases-service's Prometheus scrape (purchases_stored_total).")
    private URI purchasesMetricsUrl = URI.create("http://127.0.0.1:9082/actuator/prometheus");

    @Option(names = "--store-metrics-url", defaultValue = "http://127.0.0.1:9081/actuator/prometheus",
            description = "store-service's Prometheus scrape (store_purchases_counted); once per store partition, summed; "
                    + "with copies, copy group by copy group (the partitions of copy 0, then of copy 1, ...).")
    private List<URI> storeMetricsUrls;

    @Option(names = "--store-copies", paramLabel = "C", description = "Copies of every store partition: the --store-metrics-url "
            + "list is C copy groups, each of which must count every purchase once.")
    private int storeCopies = 1;

    @Option(names = "--store-state-url", paramLabel = "URL", description = "store-service's base URL (GET /state/summary), "
            + "in the order of --store-metrics-url; given, the copies of every partition must agree on purchases, quantity "
            + "and digest.")
    private List<URI> storeStateUrls = new ArrayList<>();

    @Option(names = "--save-baseline", paramLabel = "FILE", description = "Only write the services' counts now to FILE (before a run) and exit.")
    private Path saveBaseline;

    @Option(names = "--baseline", paramLabel = "FILE", description = "Counts written by --save-baseline before the run; without it the services started empty.")
    private Path baseline;

    @Option(names = "--idle-timeout", paramLabel = "SECONDS", description = "Stop waiting after this long without progress.")
    private double idleTimeoutSeconds = 30;

    @Option(names = "--poll-interval", paramLabel = "SECONDS", description = "How often the counts are read while waiting.")
    private double pollSeconds = 1;

    @Option(names = "--counts-out", paramLabel = "FILE", description = "Also write 'A M S C L D' (the line's six numbers) to FILE, for tables.")
    private Path countsOut;

    @Override
    public Integer call() throws Exception {
        require(storeCopies >= 1 && storeMetricsUrls.size() % storeCopies == 0,
                "--store-copies must divide the --store-metrics-url list into copy groups of the same partitions");
        require(storeStateUrls.isEmpty() || storeStateUrls.size() == storeMetricsUrls.size(),
                "give one --store-state-url per --store-metrics-url, in the same order");
        PlatformCounts counts = new PlatformCounts(purchasesUrl, purchasesMetricsUrl, storeMetricsUrls, storeCopies);
        PrintStream err = System.err;
        if (saveBaseline != null) {
            require(results.isEmpty(), "--save-baseline takes no result files");
            OptionalLong stored = counts.stored();
            List<OptionalLong> counted = counts.countedByCopy();
            if (stored.isEmpty() || counted.stream().anyMatch(OptionalLong::isEmpty)) {
                err.println("[verify] " + unreadable(stored, counted));
                return 2;
            }
            Files.createDirectories(saveBaseline.toAbsolutePath().getParent());
            List<Long> byCopy = counted.stream().map(OptionalLong::getAsLong).toList();
            JSON.writeValue(saveBaseline.toFile(), new Baseline(stored.getAsLong(), byCopy.getFirst(), byCopy));
            return 0;
        }
        require(!results.isEmpty(), "name the run's result file(s)");
        require(idleTimeoutSeconds > 0 && pollSeconds > 0, "--idle-timeout and --poll-interval must be positive");
        long accepted = 0;
        long maybeAccepted = 0;
        for (Path file : results) {
            RunResult run = ResultFiles.read(file);
            PurchaseOutcomes purchases = run.purchases();
            if (purchases == null) {
                err.println("[verify] " + file + " does not say what became of each purchase (written by an older load client): run again");
                return 2;
            }
            accepted += purchases.accepted();
            maybeAccepted += purchases.maybeAccepted();
        }
        Baseline before = baseline == null ? new Baseline(0, 0, null) : JSON.readValue(baseline.toFile(), Baseline.class);
        Drained drained = drain(counts, accepted, before);
        if (drained.stored().isEmpty() || drained.counted().stream().anyMatch(OptionalLong::isEmpty)) {
            err.println("[verify] " + unreadable(drained.stored(), drained.counted()));
            return 2;
        }
        // Every copy group is judged on its own; the worst one goes to --counts-out.
        ExactlyOnce.Verdict worst = null;
        boolean kept = true;
        for (int copy = 0; copy < storeCopies; copy++) {
            ExactlyOnce.Verdict verdict = ExactlyOnce.judge(accepted, maybeAccepted,
                    drained.stored().getAsLong() - before.stored(), drained.counted().get(copy).getAsLong() - before.counted(copy));
            System.out.println((storeCopies > 1 ? "copy " + copy + ": " : "") + verdict.line());
            kept &= verdict.kept();
            if (worst == null || verdict.lost() + verdict.duplicated() > worst.lost() + worst.duplicated()) {
                worst = verdict;
            }
        }
        if (countsOut != null) {
            Files.writeString(countsOut, worst.numbers() + "\n", StandardCharsets.US_ASCII);
        }
        if (!drained.settled()) {
            err.printf(Locale.ROOT, "[verify] the counts as they stood after %.0f s without progress%n", idleTimeoutSeconds);
        }
        if (!storeStateUrls.isEmpty()) {
            CopyAgreement.Result agreement = new CopyAgreement(storeStateUrls, storeCopies).check();
            agreement.lines().forEach(System.out::println);
            kept &= agreement.agree();
        }
        return kept ? 0 : 1;
    }

    /** The counts once the pipeline drained, copy group by copy group; {@code settled} is false when it gave up waiting. */
    private record Drained(OptionalLong stored, List<OptionalLong> counted, boolean settled) {
    }

    /**
     * Waits while the services make progress: until every copy group of store-service has counted
     * at least {@code accepted} purchases more than before and nothing moved for one poll, then reads the
     * database's count (only then: a Scan every poll slowed DynamoDB Local's own drain), and stops
     * if it holds the accepted purchases too; or until nothing moved for the idle timeout.
     */
    private Drained drain(PlatformCounts counts, long accepted, Baseline before) throws InterruptedException {
        long pollNanos = Math.round(pollSeconds * 1e9);
        long idleLimitNanos = Math.round(idleTimeoutSeconds * 1e9);
        String lastProgress = null;
        long lastChangeNanos = System.nanoTime();
        while (true) {
            List<OptionalLong> counted = counts.countedByCopy();
            String progress = counts.written() + "/" + counted;
            long now = System.nanoTime();
            boolean moved = !progress.equals(lastProgress);
            if (moved) {
                lastProgress = progress;
                lastChangeNanos = now;
            }
            boolean idleTooLong = now - lastChangeNanos >= idleLimitNanos;
            boolean countedEnough = true;
            for (int copy = 0; copy < counted.size(); copy++) {
                countedEnough &= counted.get(copy).isPresent() && counted.get(copy).getAsLong() - before.counted(copy) >= accepted;
            }
            if ((countedEnough && !moved) || idleTooLong) {
                OptionalLong stored = counts.stored();
                boolean storedEnough = stored.isPresent() && stored.getAsLong() - before.stored() >= accepted;
                if ((countedEnough && storedEnough) || idleTooLong) {
                    return new Drained(stored, counted, !idleTooLong);
                }
            }
            TimeUnit.NANOSECONDS.sleep(pollNanos);
        }
    }

    private String unreadable(OptionalLong stored, List<OptionalLong> counted) {
        List<String> missing = new ArrayList<>();
        if (stored.isEmpty()) {
            missing.add("purchases-service's count (" + purchasesUrl + "/purchases/count)");
        }
        if (counted.stream().anyMatch(OptionalLong::isEmpty)) {
            missing.add("store-service's store_purchases_counted (" + storeMetricsUrls + ")");
        }
        return "could not read " + String.join(" nor ", missing);
    }

    private void require(boolean condition, String message) {
        if (!condition) {
            throw new ParameterException(Objects.requireNonNull(spec).commandLine(), message);
        }
    }
}
