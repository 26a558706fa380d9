package com.supermarket.loadclient.report;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.run.RunCommand;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code report}: reads several {@code run --out} files and writes Markdown tables (the results;
 * CPU per request by process; the latency distribution; the environment), PNG charts (throughput
 * and p99 against stores, one series per label; p50 and p99 against offered load for paced runs;
 * throughput and p99 over time per run) and one self-contained HTML file of both
 * ({@link HtmlReport}). With {@code --baseline}, each run's metrics against a baseline run's
 * ({@link BaselineComparison}), exiting 99 when one is worse than the tolerance allows.
 * Picocli fills the fields; not thread-safe.
 */
@Command(name = "report", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = { "Compares runs: writes report.md (results, CPU per request by process, the latency",
                "distribution, each run's environment), report.html (the same and every chart, one file, nothing",
                "fetched from the network), throughput-vs-stores.png and p99-vs-stores.png (closed-loop runs, one series per label),",
                "latency-vs-offered-load.png (paced --rate runs: p50 and p99 per label) and one",
                "timeline-<label>-<stores>[-<rate>].png per run into the output folder, and prints the tables.",
                "With --baseline, also each run's metrics against the baseline run's; exit 99 if one is worse",
                "by more than --tolerance." })
public final class ReportCommand implements Callable<Integer> {

    @Parameters(arity = "1..*", paramLabel = "RESULT.json", description = "Result files written by 'run --out'.")
    private List<Path> results = new ArrayList<>();

    @Option(names = { "-d", "--out-dir" }, description = "Folder for the table and the charts.")
    private Path outDir = Path.of("report");

    @Option(names = "--baseline", paramLabel = "RUN.json",
            description = "Compare each run with this one: per metric (successful req/s, POST p50/p90/p99/p99.9, "
                    + "failed %, CPU ms per request by process) the change and pass/fail against --tolerance; "
                    + "exit 99 if any fails. A metric missing from either file is shown, not judged.")
    private Path baseline;

    @Option(names = "--tolerance", paramLabel = "PERCENT", description = "How much worse than --baseline a metric "
            + "may be: lower for throughput, higher for latency, failures and CPU (a baseline of 0 allows no increase).")
    private String tolerance = "10%";

    @Option(names = "--append", paramLabel = "FILE.md", description = "Markdown added at the end of report.md and "
            + "report.html (headings, tables, fenced code); repeatable.")
    private List<Path> appended = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        double allowed = BaselineComparison.parseTolerance(tolerance);
        List<RunResult> runs = new ArrayList<>();
        for (Path file : results) {
            runs.add(ResultFiles.read(file));
        }
        runs.sort(Comparator.comparing(RunResult::label).thenComparing(RunResult::mode)
                .thenComparingInt(run -> run.parameters().maxStores()).thenComparingDouble(run -> run.parameters().rate()));
        Files.createDirectories(outDir);
        String table = ReportTable.markdown(runs) + "\n## CPU per successful request, ms, by process\n\n"
                + "Measured over each run (first request to last answer).\n\n" + ReportTable.cpuMarkdown(runs)
                + "\n## While every store sent\n\n"
                + "From the first whole second after the last phase opened to the first store's finish: a paced "
                + "run's full rate, a closed loop's peak, without the phases' ramp and tail.\n\n"
                + ReportTable.fullLoadMarkdown(runs)
                + "\n## Latency distribution, ms\n\n" + ReportTable.distributionMarkdown(runs)
                + "\n## Environment\n\n" + ReportTable.environmentMarkdown(runs);
        boolean passed = true;
        if (baseline != null) {
            RunResult base = ResultFiles.read(baseline);
            List<BaselineComparison.Delta> deltas = new ArrayList<>();
            runs.forEach(run -> deltas.addAll(BaselineComparison.compare(base, run, allowed)));
            passed = BaselineComparison.passed(deltas);
            table += String.format(Locale.ROOT, "%n## Against the baseline %s, tolerance %s%n%n%s%n%s%n", baseline.getFileName(),
                    tolerance, BaselineComparison.markdown(deltas), passed ? "Every judged metric passed."
                            : "**FAILED**: a metric is worse than the baseline by more than the tolerance.");
        }
        for (Path file : appended) {
            table += "\n" + Files.readString(file, StandardCharsets.UTF_8);
        }
        String markdown = "# Load client report\n\n" + table;
        Files.writeString(outDir.resolve("report.md"), markdown, StandardCharsets.UTF_8);
        List<Path> charts = charts(runs);
        HtmlReport.write(markdown, charts, outDir.resolve("report.html"));
        System.out.print(table);
        System.out.println("report.md, report.html and charts in " + outDir);
        return passed ? 0 : RunCommand.EXIT_THRESHOLD_CROSSED;
    }

    /** Draws every chart into the output folder and returns their files. */
    private List<Path> charts(List<RunResult> runs) throws java.io.IOException {
        List<Path> charts = new ArrayList<>();
        List<RunResult> closed = runs.stream().filter(run -> run.mode().equals("closed")).toList();
        List<RunResult> open = runs.stream().filter(run -> run.mode().equals("open")).toList();
        if (!closed.isEmpty()) {
            charts.add(outDir.resolve("throughput-vs-stores.png"));
            Charts.versusStores(closed, "Successful throughput vs stores", "successful requests/s",
                    RunResult::successThroughput, charts.getLast());
            charts.add(outDir.resolve("p99-vs-stores.png"));
            Charts.versusStores(closed, "POST p99 latency vs stores", "p99 ms", run -> run.postLatency().p99Ms(),
                    charts.getLast());
        }
        if (!open.isEmpty()) {
            charts.add(outDir.resolve("latency-vs-offered-load.png"));
            Charts.latencyVersusOfferedLoad(open, charts.getLast());
        }
        java.util.Map<String, Integer> seen = new java.util.HashMap<>();
        for (RunResult run : runs) {
            // Repeated runs of one label and store count get -2, -3... instead of overwriting.
            String name = timelineName(run);
            int repeat = seen.merge(name, 1, Integer::sum);
            charts.add(outDir.resolve(repeat == 1 ? name + ".png" : name + "-" + repeat + ".png"));
            Charts.overTime(run, charts.getLast());
        }
        return charts;
    }

    static String timelineName(RunResult run) {
        return "timeline-" + run.label().replaceAll("[^A-Za-z0-9._-]", "_") + "-" + run.parameters().maxStores()
                + (run.mode().equals("open") ? "-" + Math.round(run.parameters().rate()) : "");
    }
}
