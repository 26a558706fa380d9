package com.supermarket.loadclient.report;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;

import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunResult;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code report}: reads several {@code run --out} files and writes Markdown tables (the results;
 * CPU per request by process) and PNG charts (throughput and p99 against stores, one series per
 * label; p50 and p99 against offered load for paced runs; throughput and p99 over time per run).
 * Picocli fills the fields; not thread-safe.
 */
@Command(name = "report", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = { "Compares runs: writes report.md (results, and CPU per request by process),",
                "throughput-vs-stores.png and p99-vs-stores.png (closed-loop runs, one series per label),",
                "latency-vs-offered-load.png (paced --rate runs: p50 and p99 per label) and one",
                "timeline-<label>-<stores>[-<rate>].png per run into the output folder, and prints the tables." })
public final class ReportCommand implements Callable<Integer> {

    @Parameters(arity = "1..*", paramLabel = "RESULT.json", description = "Result files written by 'run --out'.")
    private List<Path> results = new ArrayList<>();

    @Option(names = { "-d", "--out-dir" }, description = "Folder for the table and the charts.")
    private Path outDir = Path.of("report");

    @Override
    public Integer call() throws Exception {
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
                + ReportTable.fullLoadMarkdown(runs);
        Files.writeString(outDir.resolve("report.md"), "# Load client report\n\n" + table, StandardCharsets.UTF_8);
        List<RunResult> closed = runs.stream().filter(run -> run.mode().equals("closed")).toList();
        List<RunResult> open = runs.stream().filter(run -> run.mode().equals("open")).toList();
        if (!closed.isEmpty()) {
            Charts.versusStores(closed, "Successful throughput vs stores", "successful requests/s",
                    RunResult::successThroughput, outDir.resolve("throughput-vs-stores.png"));
            Charts.versusStores(closed, "POST p99 latency vs stores", "p99 ms", run -> run.postLatency().p99Ms(),
                    outDir.resolve("p99-vs-stores.png"));
        }
        if (!open.isEmpty()) {
            Charts.latencyVersusOfferedLoad(open, outDir.resolve("latency-vs-offered-load.png"));
        }
        java.util.Map<String, Integer> seen = new java.util.HashMap<>();
        for (RunResult run : runs) {
            // Repeated runs of one label and store count get -2, -3... instead of overwriting.
            String name = timelineName(run);
            int repeat = seen.merge(name, 1, Integer::sum);
            Charts.overTime(run, outDir.resolve(repeat == 1 ? name + ".png" : name + "-" + repeat + ".png"));
        }
        System.out.print(table);
        System.out.println("report and charts in " + outDir);
        return 0;
    }

    static String timelineName(RunResult run) {
        return "timeline-" + run.label().replaceAll("[^A-Za-z0-9._-]", "_") + "-" + run.parameters().maxStores()
                + (run.mode().equals("open") ? "-" + Math.round(run.parameters().rate()) : "");
    }
}
