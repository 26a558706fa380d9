package com.supermarket.tools.compare;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.supermarket.tools.Scrape;
import com.supermarket.tools.prometheus.PrometheusText;
import com.supermarket.tools.soak.ProcStat;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pipeline-sampler}: what scripts/compare.sh records beside each benchmark, from outside
 * it, so that commits whose own scripts measure differently are measured alike: every
 * {@code --every} milliseconds a row of {@code pipeline.csv} with the time, the purchases stored
 * and counted so far, the messages purchase-api published so far, and each watched process's CPU
 * ticks. Processes are found by their command line at every row (the benchmark starts and stops
 * them), and several matching one name are summed. Runs until killed. Not thread-safe.
 *
 * <p>A row costs each service a scrape, and a scrape costs a service about what a few hundred
 * purchases do, so while the load runs ({@code --load}) the rows come every {@code --every-loaded}
 * ms, and the first row after the load ends comes at once: the drain is then timed at
 * {@code --every} and a quarter of the scrapes fall in the run.
 */
@Command(name = "pipeline-sampler", mixinStandardHelpOptions = true, sortOptions = false,
        description = { "scripts/compare.sh's sampler: a row of pipeline.csv every --every ms until killed:",
                "epoch ms, purchases stored (purchases_stored_total), counted (store_purchases_counted), messages",
                "published by purchase-api (its batch-size summary's count) and each --process's CPU clock ticks." })
public final class PipelineSamplerCommand implements Callable<Integer> {

    /**
     * A metric read from a scrape: the families asked for (Spring Boot's {@code includedNames},
     * so that a scrape every 250 ms costs the service little) and the sample names summed, the
     * first one present.
     */
    record Metric(List<String> families, List<String> samples) {
    }

    /** purchase-api's published batches: the meter's name now, and before its api. prefix. */
    static final Metric API_MESSAGES = new Metric(List.of("api_purchases_batch_size_purchases", "purchases_batch_size_purchases"),
            List.of("api_purchases_batch_size_purchases_count", "purchases_batch_size_purchases_count"));
    static final Metric STORED = new Metric(List.of("purchases_stored"), List.of("purchases_stored_total"));
    static final Metric COUNTED = new Metric(List.of("store_purchases_counted"), List.of("store_purchases_counted"));

    @Option(names = "--out", required = true, description = "The CSV to write (replaced).")
    private Path out;

    @Option(names = "--every", description = "Milliseconds between rows.")
    private long everyMillis = 250;

    @Option(names = "--load", paramLabel = "REGEX",
            description = "The load's process, a regular expression found in its command line: while one runs, rows every --every-loaded ms.")
    private Pattern load;

    @Option(names = "--every-loaded", description = "Milliseconds between rows while the load runs.")
    private long everyLoadedMillis = 1000;

    @Option(names = "--api-metrics", required = true, description = "purchase-api's /actuator/prometheus URL.")
    private String apiMetrics;

    @Option(names = "--purchases-metrics", required = true, description = "purchases-service's /actuator/prometheus URL.")
    private String purchasesMetrics;

    @Option(names = "--store-metrics", required = true,
            description = "A store-service /actuator/prometheus URL; repeatable: one per partition of one copy group, summed.")
    private List<String> storeMetrics;

    @Option(names = "--process", paramLabel = "NAME=REGEX",
            description = "A process to watch: NAME, and a regular expression found in its command line; repeatable.")
    private Map<String, String> processes = new LinkedHashMap<>();

    /** How often a sleep between rows checks whether the load has ended. */
    private static final long LOAD_CHECK_MILLIS = 20;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    @Override
    public Integer call() throws Exception {
        Map<String, Pattern> patterns = new LinkedHashMap<>();
        processes.forEach((name, regex) -> patterns.put(name, Pattern.compile(regex)));
        List<String> header = new ArrayList<>(List.of("epoch_ms", "stored", "counted", "api_messages"));
        patterns.keySet().forEach(name -> header.add(name + "_ticks"));
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            csv.println(String.join(",", header));
            csv.flush();
            long next = System.currentTimeMillis();
            while (!Thread.currentThread().isInterrupted()) {
                List<String> row = new ArrayList<>();
                row.add(Long.toString(System.currentTimeMillis()));
                row.add(cell(metric(purchasesMetrics, STORED)));
                row.add(cell(storeMetrics.stream().map(url -> metric(url, COUNTED))
                        .reduce(OptionalDouble.of(0), PipelineSamplerCommand::sum)));
                row.add(cell(metric(apiMetrics, API_MESSAGES)));
                Map<Long, String> commandLines = commandLines();
                patterns.values().forEach(pattern -> row.add(ticks(pattern, commandLines)));
                csv.println(String.join(",", row));
                csv.flush();
                List<Long> loads = load == null ? List.of() : pidsOf(load, commandLines);
                next += loads.isEmpty() ? everyMillis : everyLoadedMillis;
                next = sleepUntil(next, loads, load);
            }
        }
        return 0;
    }

    /** The first of the metric's samples that the scrape at {@code url} has, summed over its labels; empty without an answer. */
    private OptionalDouble metric(String url, Metric metric) {
        String text = get(url + (url.contains("?") ? "&" : "?") + "includedNames=" + String.join(",", metric.families()));
        if (text.isEmpty()) {
            return OptionalDouble.empty();
        }
        PrometheusText scrape = PrometheusText.parse(text);
        for (String name : metric.samples()) {
            OptionalDouble sum = scrape.sum(name, Map.of());
            if (sum.isPresent()) {
                return sum;
            }
        }
        return OptionalDouble.empty();
    }

    private static OptionalDouble sum(OptionalDouble a, OptionalDouble b) {
        return a.isPresent() && b.isPresent() ? OptionalDouble.of(a.getAsDouble() + b.getAsDouble()) : OptionalDouble.empty();
    }

    private static String cell(OptionalDouble value) {
        return value.isPresent() ? Long.toString(Math.round(value.getAsDouble())) : "";
    }

    /**
     * Sleeps until {@code next} (epoch ms), or until every one of {@code loads} has ended if that
     * comes first; the time the next row is due. A load has ended when its command line no longer
     * reads as the one that found it: the same read as the listing's, and an exited process that
     * is not yet reaped has none.
     */
    private static long sleepUntil(long next, List<Long> loads, Pattern load) throws InterruptedException {
        long now = System.currentTimeMillis();
        if (now >= next) {
            return now; // behind: the schedule starts again from now
        }
        for (; now < next; now = System.currentTimeMillis()) {
            if (!loads.isEmpty() && loads.stream().noneMatch(pid -> commandLine(pid).map(load.asPredicate()::test).orElse(false))) {
                return now;
            }
            Thread.sleep(Math.min(LOAD_CHECK_MILLIS, next - now));
        }
        return next;
    }

    private static List<Long> pidsOf(Pattern pattern, Map<Long, String> commandLines) {
        return commandLines.entrySet().stream().filter(e -> pattern.matcher(e.getValue()).find()).map(Map.Entry::getKey).toList();
    }

    /** The summed ticks of the processes whose command line holds {@code pattern}; empty when none runs. */
    private static String ticks(Pattern pattern, Map<Long, String> commandLines) {
        long total = 0;
        boolean found = false;
        for (long pid : pidsOf(pattern, commandLines)) {
            OptionalLong ticks = ProcStat.cpuTicks(Path.of("/proc"), pid);
            if (ticks.isPresent()) {
                total += ticks.getAsLong();
                found = true;
            }
        }
        return found ? Long.toString(total) : "";
    }

    /** Every process's command line, its arguments joined by spaces. */
    private static Map<Long, String> commandLines() throws IOException {
        Map<Long, String> lines = new LinkedHashMap<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            for (Path entry : entries.filter(p -> p.getFileName().toString().matches("[0-9]+")).toList()) {
                long pid = Long.parseLong(entry.getFileName().toString());
                commandLine(pid).ifPresent(line -> lines.put(pid, line));
            }
        }
        return lines;
    }

    /** The process's command line, its arguments joined by spaces; empty once it has ended or if it has none. */
    private static Optional<String> commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return raw.length == 0 ? Optional.empty()
                    : Optional.of(new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').strip());
        } catch (IOException gone) {
            return Optional.empty();
        }
    }

    private String get(String url) {
        return Scrape.body(http, HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build());
    }
}
