package com.supermarket.loadclient.report;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import com.supermarket.loadclient.result.FullLoad;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunEnvironment;
import com.supermarket.loadclient.result.RunResult;

/** Markdown tables of several runs, one row each, in the order given. Stateless. */
final class ReportTable {

    /** The load client's own column in the CPU table. */
    static final String CLIENT = "load-client";

    private ReportTable() {
    }

    static String markdown(List<RunResult> runs) {
        StringBuilder table = new StringBuilder();
        table.append("| label | stores | mode | offered req/s | successful | failed | first tries failed | retries "
                + "| wall s | throughput req/s | successful req/s | POST mean ms | median ms | p99 ms | p99.9 ms | max ms |\n");
        table.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (RunResult run : runs) {
            LatencySummary post = run.postLatency();
            table.append(String.format(Locale.ROOT,
                    "| %s | %d | %s | %s | %,d | %,d | %,d | %,d | %.1f | %,.0f | %,.0f | %.1f | %.1f | %.1f | %.1f | %.1f |%n",
                    run.label(), run.parameters().maxStores(), run.mode(), offered(run), run.successful(), run.failed(),
                    run.firstTryFailures(), run.retries(), run.wallTimeSeconds(), run.throughput(),
                    run.successThroughput(), post.meanMs(), post.medianMs(), post.p99Ms(), post.p999Ms(), post.maxMs()));
        }
        return table.toString();
    }

    /**
     * Milliseconds of CPU per successful request, per process (the client, then the processes it
     * watched, by name), and their total: where each run's CPU went.
     */
    static String cpuMarkdown(List<RunResult> runs) {
        Set<String> processes = new LinkedHashSet<>();
        processes.add(CLIENT);
        runs.stream().flatMap(run -> run.processCpuSeconds().keySet().stream()).sorted().forEach(processes::add);
        StringBuilder table = new StringBuilder("| label | stores | mode | offered req/s |");
        processes.forEach(process -> table.append(' ').append(process).append(" |"));
        table.append(" total |\n|---|---:|---|---:|");
        table.append("---:|".repeat(processes.size() + 1)).append('\n');
        for (RunResult run : runs) {
            table.append(String.format(Locale.ROOT, "| %s | %d | %s | %s |", run.label(), run.parameters().maxStores(),
                    run.mode(), offered(run)));
            double total = 0;
            for (String process : processes) {
                double seconds = process.equals(CLIENT) ? run.clientCpuSeconds()
                        : run.processCpuSeconds().getOrDefault(process, Double.NaN);
                if (Double.isNaN(seconds) || run.successful() == 0) {
                    table.append(" - |");
                } else {
                    total += seconds;
                    table.append(String.format(Locale.ROOT, " %.3f |", seconds * 1000 / run.successful()));
                }
            }
            table.append(run.successful() == 0 ? " - |\n" : String.format(Locale.ROOT, " %.3f |%n", total * 1000 / run.successful()));
        }
        return table.toString();
    }

    /**
     * Per run, the window in which every store sent ({@link FullLoad}): its length, its
     * throughput, the median and p99 of each request type answered within it, and of the
     * client's event-loop lag (the client's own share of those latencies; "-" for result files
     * written before it was measured).
     */
    static String fullLoadMarkdown(List<RunResult> runs) {
        List<RequestType> types = Arrays.stream(RequestType.values())
                .filter(type -> runs.stream().anyMatch(run -> run.fullLoad().latency().containsKey(type))).toList();
        StringBuilder table = new StringBuilder("| label | stores | mode | offered req/s | seconds | successful req/s |");
        types.forEach(type -> table.append(' ').append(type.csvName()).append(" p50 / p99 ms |"));
        table.append(" client loop lag p50 / p99 ms |");
        table.append("\n|---|---:|---|---:|---:|---:|").append("---:|".repeat(types.size() + 1)).append('\n');
        for (RunResult run : runs) {
            FullLoad full = run.fullLoad();
            table.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %.1f | %,.0f |", run.label(),
                    run.parameters().maxStores(), run.mode(), offered(run), full.seconds(), full.requestsPerSecond()));
            for (RequestType type : types) {
                table.append(medianAndP99(full.latency().get(type)));
            }
            table.append(medianAndP99(full.clientLoopLag())).append('\n');
        }
        return table.toString();
    }

    /**
     * Per run and request type answered: count, mean and every recorded percentile ("-" for a
     * percentile a result file predates, read as 0).
     */
    static String distributionMarkdown(List<RunResult> runs) {
        StringBuilder table = new StringBuilder("| label | stores | mode | offered req/s | request | count | mean ms "
                + "| p50 | p90 | p95 | p99 | p99.9 | p99.99 | max ms |\n|---|---:|---|---:|---|---:|"
                + "---:|".repeat(8) + "\n");
        for (RunResult run : runs) {
            for (RequestType type : RequestType.values()) {
                LatencySummary l = run.latency().get(type);
                if (l == null || l.count() == 0) {
                    continue;
                }
                table.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %,d |", run.label(),
                        run.parameters().maxStores(), run.mode(), offered(run), type.csvName(), l.count()));
                for (double ms : new double[] { l.meanMs(), l.medianMs(), l.p90Ms(), l.p95Ms(), l.p99Ms(), l.p999Ms(),
                        l.p9999Ms(), l.maxMs() }) {
                    table.append(ms == 0 ? " - |" : String.format(Locale.ROOT, " %.2f |", ms));
                }
                table.append('\n');
            }
        }
        return table.toString();
    }

    /** Per run, where it was made ({@link RunEnvironment}); "-" throughout for files written before it was recorded. */
    static String environmentMarkdown(List<RunResult> runs) {
        StringBuilder table = new StringBuilder("| label | stores | mode | offered req/s | commit | host | cores | CPU "
                + "| memory GiB | JVM | load avg start / end | declared | command line |\n"
                + "|---|---:|---|---:|---|---|---:|---|---:|---|---:|---|---|\n");
        for (RunResult run : runs) {
            table.append(String.format(Locale.ROOT, "| %s | %d | %s | %s |", run.label(), run.parameters().maxStores(),
                    run.mode(), offered(run)));
            RunEnvironment env = run.environment();
            if (env == null) {
                table.append(" - |".repeat(9)).append('\n');
                continue;
            }
            String commit = env.gitCommit() == null ? "-"
                    : env.gitCommit().substring(0, Math.min(12, env.gitCommit().length()))
                            + (Boolean.TRUE.equals(env.gitDirty()) ? " (dirty)" : "");
            String declared = env.declared().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                    .collect(Collectors.joining(" "));
            for (String cell : List.of(commit, String.valueOf(env.host()), String.valueOf(env.cores()),
                    String.valueOf(env.cpuModel()),
                    String.format(Locale.ROOT, "%.1f", env.memoryBytes() / (1024.0 * 1024 * 1024)), String.valueOf(env.jvm()),
                    String.format(Locale.ROOT, "%.2f / %.2f", env.loadAverageAtStart(), env.loadAverageAtEnd()),
                    declared.isEmpty() ? "-" : declared, String.join(" ", env.commandLine()))) {
                table.append(' ').append(cell.replace("|", "\\|")).append(" |");
            }
            table.append('\n');
        }
        return table.toString();
    }

    /** "-" for what was not measured: a request type not sent, or a loop lag not recorded. */
    private static String medianAndP99(LatencySummary latency) {
        return latency == null || latency.count() == 0 ? " - |"
                : String.format(Locale.ROOT, " %.1f / %.1f |", latency.medianMs(), latency.p99Ms());
    }

    private static String offered(RunResult run) {
        return run.mode().equals("open") ? String.format(Locale.ROOT, "%,.0f", run.parameters().rate()) : "-";
    }
}
