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
 * {@code report}: reads several {@code run --out} files and writes a Markdown table and PNG charts
 * (throughput and p99 against stores, one series per label; throughput and p99 over time per
 * run). Picocli fills the fields; not thread-safe.
 */
@Command(name = "report", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = { "Compares runs: writes report.md, throughput-vs-stores.png, p99-vs-stores.png and",
                "one timeline-<label>-<stores>.png per run into the output folder, and prints the table." })
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
        runs.sort(Comparator.comparing(RunResult::label).thenComparingInt(run -> run.parameters().maxStores()));
        Files.createDirectories(outDir);
        String table = ReportTable.markdown(runs);
        Files.writeString(outDir.resolve("report.md"), "# Load client report\n\n" + table, StandardCharsets.UTF_8);
        Charts.versusStores(runs, "Successful throughput vs stores", "successful requests/s",
                RunResult::successThroughput, outDir.resolve("throughput-vs-stores.png"));
        Charts.versusStores(runs, "POST p99 latency vs stores", "p99 ms", run -> run.postLatency().p99Ms(),
                outDir.resolve("p99-vs-stores.png"));
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
        return "timeline-" + run.label().replaceAll("[^A-Za-z0-9._-]", "_") + "-" + run.parameters().maxStores();
    }
}
