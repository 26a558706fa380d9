package com.supermarket.loadclient.run;

import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.ThresholdResult;
import com.supermarket.loadclient.stub.StubServer;

import picocli.CommandLine.Command;
import picocli.CommandLine.Help.Visibility;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code run}: the standard client's load profile against a purchase API, with a summary on
 * stdout and optional JSON, CSV and histogram-log results; thresholds checked at the end; a clean
 * stop on SIGINT or SIGTERM. Picocli fills the fields; not thread-safe.
 */
@Command(name = "run", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        description = {
                "Sends the standard load profile: stores 1..maxStores, each a state machine with its own keep-alive "
                + "connection(s) on the --io-threads event loops, 9 hours of purchases per store, staggered east (1/4 "
                + "of the stores), central (1/4, once any store had 3 hours answered) and west (1/2, at 5 hours). "
                + "With --duration the run lasts that long instead, the phases scaled into it by the clock. Closed "
                + "loop unless --rate is given. SIGINT (Ctrl-C) or SIGTERM stops the run cleanly: the requests in "
                + "flight get 5 s, then the summary is printed and every file written, marked \"interrupted\": true; "
                + "a second signal quits at once.",
                "Exit status: 0 the run ended, a request succeeded and every --threshold held; 1 no request "
                + "succeeded (server down) or the run failed; 2 bad options (a malformed --threshold too); "
                + "99 a --threshold was crossed; 130 stopped by SIGINT or SIGTERM (files written)." })
public final class RunCommand implements Callable<Integer> {

    /** The run ended, some request succeeded, every threshold held. */
    static final int EXIT_OK = 0;

    /** No request succeeded (the server is down or refuses everything), or the run failed. */
    static final int EXIT_FAILED = 1;

    /** A threshold was crossed (k6's exit status for the same). */
    public static final int EXIT_THRESHOLD_CROSSED = 99;

    /** Stopped by SIGINT or SIGTERM; the results up to then are written. */
    static final int EXIT_INTERRUPTED = 130;

    /**
     * Waits of 0.1 + 0.2 + ... + 6.4 + 5 x 10 s at most (63 s), half that at least (31 s): a
     * killed purchase-api took 10 s to answer again on a quiet machine, 30-40 s on this shared
     * one under other builds.
     */
    static final int RETRIES_RIDING_OUT_A_RESTART = 12;

    @Spec
    private CommandSpec spec;

    @Option(names = { "-u", "--base-url" }, description = "Purchase API base URL.")
    private String baseUrl = "http://localhost:8080";

    @Option(names = { "-s", "--max-stores" }, description = "Stores 1..N, each with --max-in-flight-per-store connections.")
    private int maxStores = 32;

    @Option(names = "--customers-per-store", description = "custID is uniform in [store*1000, store*1000+N).")
    private int customersPerStore = 1000;

    @Option(names = "--max-item-id", description = "ItemID is uniform in 1..N.")
    private int maxItemId = 100_000;

    @Option(names = { "-p", "--purchases-per-hour" }, description = "POSTs per store per hour (9 hours); the run's length unless --duration is given.")
    private int purchasesPerHour = 300;

    @Option(names = { "-i", "--items-per-purchase" }, description = "Items per purchase, 1..20.")
    private int itemsPerPurchase = 5;

    @Option(names = "--date", description = "Purchase date, yyyyMMdd.")
    private String date = "20210101";

    @Option(names = { "-l", "--label" }, description = "Names this setup in results and charts (e.g. the instance size).")
    private String label = "local";

    @Option(names = "--duration", paramLabel = "TIME", description = {
            "Run for TIME (" + TimeSpans.FORMS + ") instead of 9 hours of --purchases-per-hour: the phases scaled "
            + "into it (14 simulated hours: east open 0-9/14 of TIME, central 3/14-12/14, west 5/14-end; with "
            + "--all-stores-at-once every store the whole time), closed loop or at --rate. Requests in flight at "
            + "the end (and their retries) are still answered." })
    private String duration;

    @Option(names = "--csv", paramLabel = "FILE", description = {
            "Write one record per attempt (a retry is a record of its own, timed from its own send): "
            + "start_time_epoch_ms,request_type,latency_ms,response_code,store_id; response_code 0 = no answer." })
    private Path csv;

    @Option(names = { "-o", "--out" }, paramLabel = "FILE.json", description = "Write the run's results as JSON (input of 'report').")
    private Path out;

    @Option(names = "--hlog", paramLabel = "FILE", description = {
            "Write an HdrHistogram interval log (.hlog, one histogram per second per request type, tagged POST, "
            + "GET_STORE, GET_TOP10, and the client's LOOP_LAG; microseconds). Default: beside --out, FILE.hlog." })
    private Path hlog;

    @Option(names = "--threshold", paramLabel = "EXPR", showDefaultValue = Visibility.NEVER, description = {
            "Fail the run (exit 99) unless EXPR holds at the end; repeatable. EXPR: " + Threshold.SYNTAX + ". "
            + "E.g. 'POST.p99<50ms' 'GET_STORE.p99.9<=200ms' 'failed<0.1%' 'failed<=10' 'rps>5000'. Latencies are "
            + "the whole run's successful requests; failed counts requests that failed for good." })
    private List<String> thresholds = new ArrayList<>();

    @Option(names = "--rate", paramLabel = "R", description = {
            "Open model: R requests/s in total once every store is open (each store paced at R/maxStores); "
            + "latency counted from each request's intended send time. A request whose time comes while every "
            + "connection of its store is busy starts late, as soon as one is free (counted as a late start, "
            + "never dropped). 0 = closed loop." })
    private double rate = 0;

    @Option(names = "--max-in-flight-per-store", paramLabel = "N", description = {
            "Requests a store may have in flight at once, each on a connection of its own (a till waits for "
            + "its answer: 1). More lets a paced store keep its schedule while some answers are slow." })
    private int maxInFlightPerStore = 1;

    @Option(names = "--get-ratio", description = "GET queries per POST, alternating /items/store/{own store} and /items/top10/{random item}. 0 = POSTs only.")
    private double getRatio = 0;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "Per-request timeout; a timeout counts as a failure.")
    private double timeoutSeconds = 30;

    @Option(names = "--retries", paramLabel = "N", description = {
            "Extra attempts of a failed request (429, 5xx, timeout, lost connection; not other 4xx), after an "
            + "exponential backoff from 100 ms doubling to at most 10 s, half of it random, and never sooner than "
            + "the server's Retry-After. The default rides out 31-63 s of outage, a service restart, as a "
            + "till would; 0 = count every failure and move on, as the original client did. Retries pause "
            + "while nothing has succeeded for 2 minutes (the server is gone)." })
    private int retries = RETRIES_RIDING_OUT_A_RESTART;

    @Option(names = "--io-threads", paramLabel = "N", description = "Event-loop threads carrying the connections (wrk's -t).")
    private int ioThreads = 1;

    @Option(names = "--watch-pid", paramLabel = "NAME=PID", description = "Also measure this process's CPU time over the run (Linux); repeatable.")
    private Map<String, Long> watchedPids = new LinkedHashMap<>();

    @Option(names = "--client-warm-up", negatable = true, defaultValue = "true", fallbackValue = "true", description = {
            "First send the same kind of requests, up to 64 stores and about 20,000 POSTs, to a stub inside "
            + "this process, unreported, so the run's first requests are not timed while the client itself is "
            + "still cold (a fresh JVM's first ~300 ms read 140-200 ms against a stub). --no-client-warm-up: off." })
    private boolean clientWarmUp = true;

    @Option(names = "--progress", description = "Progress on stderr: ${COMPLETION-CANDIDATES}.")
    private ProgressMode progress = ProgressMode.AUTO;

    @Option(names = "--till-keys", paramLabel = "FILE", description = {
            "Send each store's till key (Authorization: Bearer) from FILE, as scripts/till-keys.sh writes it: "
            + "'<store or manager> <key> [label]' per line; the first manager key signs the /items/top10 "
            + "queries of --get-ratio. Without it no key is sent (the standard client's behaviour)." })
    private Path tillKeys;

    @Option(names = "--late-retries", paramLabel = "N", description = {
            "Stores 1..N each send their first accepted purchase again, late: the same Idempotency-Key, path "
            + "and body, as a till does after a lost 201 (see --late-retry-after). The re-send is the same "
            + "purchase: it adds nothing to the purchases accepted, and a correct platform stores and counts it "
            + "once. 0 = none." })
    private int lateRetries = 0;

    @Option(names = "--late-retry-after", paramLabel = "COUNT|TIME", description = {
            "When the late re-send goes: after COUNT further accepted purchases of the store (a store whose "
            + "profile ends sooner sends extra purchases until then, at most 2 x COUNT), or TIME (500ms, 90s, "
            + "5m, 1h) after the purchase's 201 (a store whose profile ends sooner waits). The default is twice "
            + "store-service's default dedup window of 1,024 purchases per store." })
    private String lateRetryAfter = "2048";

    @Option(names = "--all-stores-at-once", description = {
            "Every store opens at the start instead of in the east, central and west phases: the full --rate (or the "
            + "closed loop's) from the first second to the last store's end, a steady load for long runs (scripts/soak.sh)." })
    private boolean allStoresAtOnce;

    @Option(names = "--metrics-port", paramLabel = "PORT", description = {
            "Serve live metrics for Prometheus on PORT (every interface) at /metrics while the run goes: "
            + "loadclient_request_seconds (latency histogram by type), loadclient_requests_total (by type and "
            + "outcome), loadclient_failed_attempts_total (by reason), loadclient_requests_in_flight, "
            + "loadclient_late_starts_total; each tagged run=<--label>. Default: none served." })
    private Integer metricsPort;

    @Option(names = "--seed", description = "Random seed for ids (0 = a new one each run).")
    private long seed = 0;

    @Option(names = "--environment", paramLabel = "KEY=VALUE", showDefaultValue = Visibility.NEVER, description = {
            "Record KEY=VALUE in the result's environment (the services' settings, the instance size, what the "
            + "client cannot see); repeatable. The client adds host, cores, memory, OS, JVM, commit and its options." })
    private Map<String, String> declaredEnvironment = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        RunSettings settings = settings();
        List<Threshold> checks = thresholds(settings);
        PrintStream err = System.err;
        RunStop stop = new RunStop();
        try (StopSignals signals = StopSignals.install(stop, err); LiveMetrics live = liveMetrics(settings, err)) {
            if (clientWarmUp) {
                warmUp(settings, err, stop);
            }
            if (stop.requested()) {
                err.println("[load-client] " + stop.reason() + " during the client's warm-up: nothing measured");
                return EXIT_INTERRUPTED;
            }
            double loadAtStart = EnvironmentProbe.loadAverage();
            RunResult measured = new LoadRun(settings, err, stop, live).execute();
            RunResult result = measured.withVerdict(checks.stream().map(check -> check.check(measured)).toList(),
                    EnvironmentProbe.collect(loadAtStart, spec.commandLine().getParseResult().originalArgs(),
                            clientSettings(), declaredEnvironment), histogramLogEntry(settings.histogramLog()));
            if (out != null) {
                ResultFiles.write(result, out);
            }
            System.out.print(Summary.format(result));
            if (out != null) {
                System.out.println("  results      " + out);
            }
            if (settings.histogramLog() != null) {
                System.out.println("  hlog         " + settings.histogramLog());
            }
            if (csv != null) {
                System.out.printf(Locale.ROOT, "  csv          %s (writer thread busy %.2f s of %.1f s)%n", csv,
                        result.csvWriterBusySeconds(), result.wallTimeSeconds());
            }
            return exitStatus(result);
        }
    }

    /** Interrupted, else no success, else a threshold crossed, else 0. */
    static int exitStatus(RunResult result) {
        if (result.interrupted()) {
            return EXIT_INTERRUPTED;
        }
        if (result.successful() == 0) {
            return EXIT_FAILED;
        }
        return result.thresholds().stream().allMatch(ThresholdResult::passed) ? EXIT_OK : EXIT_THRESHOLD_CROSSED;
    }

    /** The live metrics served on {@code --metrics-port}, or null without it. */
    private LiveMetrics liveMetrics(RunSettings settings, PrintStream err) {
        if (metricsPort == null) {
            return null;
        }
        try {
            LiveMetrics live = LiveMetrics.serve(metricsPort, settings.label());
            err.printf(Locale.ROOT, "[load-client] live metrics on http://0.0.0.0:%d/metrics%n", live.port());
            return live;
        } catch (java.io.IOException e) {
            throw new ParameterException(spec.commandLine(), "--metrics-port " + metricsPort + ": " + e.getMessage());
        }
    }

    /** Runs {@link RunSettings#warmUpAgainst} against a {@link StubServer} of its own, then closes it. */
    private static void warmUp(RunSettings settings, PrintStream err, RunStop stop) throws InterruptedException {
        long start = System.nanoTime();
        try (StubServer stub = StubServer.start("127.0.0.1", 0, 1)) {
            RunResult warmUp = new LoadRun(settings.warmUpAgainst(URI.create("http://127.0.0.1:" + stub.port())),
                    new PrintStream(OutputStream.nullOutputStream()), stop).execute();
            err.printf(Locale.ROOT, "[load-client] warmed up against a stub of its own: %,d requests in %.1f s, not reported%n",
                    warmUp.successful(), (System.nanoTime() - start) / 1e9);
        }
    }

    /** The histogram log as the result names it: relative to the result's folder when there is one. */
    private String histogramLogEntry(Path histogramLog) {
        if (histogramLog == null) {
            return null;
        }
        Path folder = out == null ? null : out.toAbsolutePath().getParent();
        return (folder == null ? histogramLog : folder.relativize(histogramLog.toAbsolutePath())).toString();
    }

    /** Every option of the command with the value it has, defaults included: the run's own settings. */
    private Map<String, String> clientSettings() {
        Map<String, String> values = new LinkedHashMap<>();
        for (OptionSpec option : spec.options()) {
            if (!option.usageHelp() && !option.versionHelp()) {
                Object value = option.getValue();
                values.put(option.longestName(), value == null ? "" : value.toString());
            }
        }
        return values;
    }

    private List<Threshold> thresholds(RunSettings settings) {
        List<Threshold> parsed = new ArrayList<>();
        for (String expression : thresholds) {
            Threshold threshold;
            try {
                threshold = Threshold.parse(expression);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--threshold " + e.getMessage());
            }
            if (threshold.type() != null && threshold.type() != RequestType.POST && settings.parameters().getRatio() == 0) {
                throw new ParameterException(spec.commandLine(), "--threshold '" + expression + "': the run sends no "
                        + threshold.type().csvName() + " requests (--get-ratio is 0)");
            }
            parsed.add(threshold);
        }
        return parsed;
    }

    private RunSettings settings() {
        require(maxStores >= 1, "--max-stores must be at least 1");
        require(customersPerStore >= 1 && customersPerStore <= 1000,
                "--customers-per-store must be 1..1000 (custID ranges of stores must not overlap)");
        require(maxItemId >= 1, "--max-item-id must be at least 1");
        require(purchasesPerHour >= 1, "--purchases-per-hour must be at least 1");
        require(itemsPerPurchase >= 1 && itemsPerPurchase <= 20, "--items-per-purchase must be 1..20");
        require(rate >= 0, "--rate must be 0 (closed loop) or positive");
        require(getRatio >= 0, "--get-ratio must be 0 or positive");
        require(timeoutSeconds > 0, "--timeout must be positive");
        require(retries >= 0, "--retries must be 0 or positive");
        require(ioThreads >= 1, "--io-threads must be at least 1");
        require(lateRetries >= 0 && lateRetries <= maxStores, "--late-retries must be 0..--max-stores");
        require(maxInFlightPerStore >= 1, "--max-in-flight-per-store must be at least 1");
        require(metricsPort == null || (metricsPort >= 0 && metricsPort <= 65535), "--metrics-port must be 0..65535");
        Duration runFor = duration == null ? Duration.ZERO : TimeSpans.parseOrNull(duration);
        require(runFor != null && (duration == null || !runFor.isZero()),
                "--duration must be a positive time (" + TimeSpans.FORMS + "): " + duration);
        LateRetryPlan latePlan;
        try {
            latePlan = lateRetries == 0 ? LateRetryPlan.NONE : LateRetryPlan.of(lateRetries, lateRetryAfter);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--late-retry-after: " + e.getMessage());
        }
        try {
            LocalDate.parse(date, DateTimeFormatter.ofPattern("uuuuMMdd").withResolverStyle(ResolverStyle.STRICT));
        } catch (DateTimeParseException e) {
            throw new ParameterException(spec.commandLine(), "--date must be a real yyyyMMdd date: " + date);
        }
        URI uri;
        try {
            uri = URI.create(baseUrl);
            require(uri.getScheme() != null && uri.getScheme().startsWith("http") && uri.getHost() != null,
                    "--base-url must be an http(s) URL");
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--base-url is not a URL: " + baseUrl);
        }
        TillKeyFile keys = null;
        if (tillKeys != null) {
            try {
                keys = TillKeyFile.read(tillKeys);
            } catch (java.io.IOException | IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--till-keys: " + e.getMessage());
            }
            for (int store = 1; store <= maxStores; store++) {
                require(keys.hasStore(store), "--till-keys: no key of store " + store + " in " + tillKeys);
            }
            require(getRatio == 0 || keys.managerHeader() != null,
                    "--get-ratio with --till-keys needs a manager key in the file (the /items/top10 queries)");
        }
        ProgressMode mode = progress == ProgressMode.AUTO ? (isTerminal() ? ProgressMode.BAR : ProgressMode.LINES) : progress;
        RunParameters parameters = new RunParameters(maxStores, customersPerStore, maxItemId, purchasesPerHour,
                itemsPerPurchase, date, getRatio, rate, timeoutSeconds, retries, runFor.toMillis() / 1000.0,
                maxInFlightPerStore);
        Path histogramLog = hlog != null ? hlog
                : out == null ? null : out.resolveSibling(out.getFileName().toString().replaceFirst("\\.json$", "") + ".hlog");
        return new RunSettings(uri, label, parameters, csv, histogramLog, mode, Duration.ofSeconds(1),
                seed != 0 ? seed : System.nanoTime(), ioThreads, watchedPids, RunSettings.PAUSE_RETRIES_AFTER, keys,
                latePlan, allStoresAtOnce);
    }

    private void require(boolean condition, String message) {
        if (!condition) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    /** Java 22+ returns a Console even when redirected; ask it whether it is a terminal. */
    private static boolean isTerminal() {
        var console = System.console();
        if (console == null) {
            return false;
        }
        try {
            return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
        } catch (ReflectiveOperationException e) {
            return true;
        }
    }
}
