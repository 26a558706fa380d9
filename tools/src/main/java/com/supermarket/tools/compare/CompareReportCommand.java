package com.supermarket.tools.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code compare-report}: scripts/compare.sh's table. Reads each benchmark folder (the load
 * client's result files, the commit's shard tables, the {@code pipeline.csv} sampled beside it)
 * and writes, per run (stores and mode), one row per commit with the mean over its rounds and,
 * for every commit after the first, its ratio to the first; then every round's own row. Not
 * thread-safe; used once per process.
 */
@Command(name = "compare-report", mixinStandardHelpOptions = true, sortOptions = false,
        description = { "scripts/compare.sh's table: per run, each commit's mean over its rounds and its ratio to the first",
                "commit, then every round; Markdown on standard output." })
public final class CompareReportCommand implements Callable<Integer> {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Option(names = "--run", required = true, paramLabel = "LABEL=DIR",
            description = "A benchmark folder of the commit LABEL, in the order run; repeatable. The first LABEL is the baseline.")
    private List<String> runs;

    @Option(names = "--ticks-per-second", description = "Clock ticks per second of /proc (getconf CLK_TCK).")
    private double ticksPerSecond = 100;

    /** One round of one commit: its label, its round number, its runs' figures. */
    record Round(String label, int round, List<RunFigures> figures) {
    }

    @Override
    public Integer call() throws IOException {
        List<Round> rounds = new ArrayList<>();
        Map<String, Integer> seen = new LinkedHashMap<>();
        for (String run : runs) {
            Map.Entry<String, Path> labelled = labelled(run);
            int round = seen.merge(labelled.getKey(), 1, Integer::sum);
            rounds.add(new Round(labelled.getKey(), round, read(labelled.getValue(), ticksPerSecond)));
        }
        System.out.print(table(rounds));
        return 0;
    }

    /** LABEL=DIR split at its last {@code =}: a label may hold some (a commit run with a variable set). */
    static Map.Entry<String, Path> labelled(String run) {
        int eq = run.lastIndexOf('=');
        if (eq <= 0 || eq == run.length() - 1) {
            throw new IllegalArgumentException("--run takes LABEL=DIR, not " + run);
        }
        return Map.entry(run.substring(0, eq), Path.of(run.substring(eq + 1)));
    }

    /** The measured runs of one benchmark folder (warm-up runs left out), in name order. */
    static List<RunFigures> read(Path dir, double ticksPerSecond) throws IOException {
        PipelineSamples samples = PipelineSamples.parse(Files.readString(dir.resolve("pipeline.csv")));
        List<RunFigures> figures = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".json")
                    && !f.getFileName().toString().contains("-warmup")).sorted().toList()) {
                JsonNode result = JSON.readTree(file.toFile());
                if (!result.has("startedAt")) {
                    continue;
                }
                Path shards = dir.resolve(file.getFileName().toString().replaceFirst("\\.json$", ".shards.md"));
                figures.add(RunFigures.of(result, samples, Files.exists(shards) ? Files.readString(shards) : "", ticksPerSecond));
            }
        }
        return figures;
    }

    private record Column(String name, ToDoubleFunction<RunFigures> value, String format) {
    }

    /** The whole Markdown: a table per run of the means and ratios, then one of every round. */
    static String table(List<Round> rounds) {
        Set<String> labels = new LinkedHashSet<>();
        Set<String> runKeys = new LinkedHashSet<>();
        Set<String> processes = new LinkedHashSet<>();
        for (Round round : rounds) {
            labels.add(round.label());
            round.figures().forEach(f -> {
                runKeys.add(f.run());
                processes.addAll(f.cpuMsPerPurchase().keySet());
            });
        }
        List<Column> columns = new ArrayList<>(List.of(
                new Column("req/s", RunFigures::requestsPerSecond, "%,.0f"),
                new Column("POST p50 ms", RunFigures::postP50Ms, "%.1f"),
                new Column("POST p99 ms", RunFigures::postP99Ms, "%.1f"),
                new Column("stored/s", RunFigures::storedPerSecond, "%,.0f"),
                new Column("drain s", RunFigures::drainSeconds, "%.1f"),
                new Column("backlog peak", RunFigures::backlogPeak, "%,.0f"),
                new Column("purchases/msg", RunFigures::perMessage, "%.1f")));
        for (String process : processes) {
            columns.add(new Column(process, f -> f.cpuMsPerPurchase().getOrDefault(process, Double.NaN), "%.3f"));
        }
        columns.add(new Column("CPU total", RunFigures::totalCpuMsPerPurchase, "%.3f"));
        String first = labels.iterator().next();
        StringBuilder out = new StringBuilder();
        out.append("CPU in ms per accepted purchase over run and drain, by process; drain: from the run's last answer until"
                + " every accepted purchase was stored and counted; stored/s: accepted purchases over run and drain;"
                + " ratios to ").append(first).append(".\n");
        for (String run : runKeys) {
            out.append("\n### ").append(run).append("\n\n");
            header(out, "label (rounds)", columns, "balance");
            Map<String, double[]> means = new LinkedHashMap<>();
            for (String label : labels) {
                List<RunFigures> of = rounds.stream().filter(r -> r.label().equals(label))
                        .flatMap(r -> r.figures().stream()).filter(f -> f.run().equals(run)).toList();
                double[] mean = new double[columns.size()];
                for (int c = 0; c < columns.size(); c++) {
                    ToDoubleFunction<RunFigures> value = columns.get(c).value();
                    mean[c] = of.stream().mapToDouble(value).average().orElse(Double.NaN);
                }
                means.put(label, mean);
                List<String> cells = new ArrayList<>();
                cells.add(label + " (" + of.size() + ")");
                for (int c = 0; c < columns.size(); c++) {
                    cells.add(format(columns.get(c).format(), mean[c]));
                }
                cells.add(String.join("; ", of.stream().map(RunFigures::balance).filter(b -> !b.isEmpty()).toList()));
                row(out, cells);
            }
            for (String label : labels) {
                if (label.equals(first)) {
                    continue;
                }
                List<String> cells = new ArrayList<>();
                cells.add(label + " / " + first);
                for (int c = 0; c < columns.size(); c++) {
                    cells.add(format("x%.2f", means.get(label)[c] / means.get(first)[c]));
                }
                cells.add("");
                row(out, cells);
            }
        }
        out.append("\n### Every round\n\n");
        List<Column> detail = new ArrayList<>(columns);
        header(out, "label, round, run", detail, "balance");
        for (Round round : rounds) {
            for (RunFigures f : round.figures()) {
                List<String> cells = new ArrayList<>();
                cells.add(round.label() + ", " + round.round() + ", " + f.run());
                detail.forEach(c -> cells.add(format(c.format(), c.value().applyAsDouble(f))));
                cells.add(f.balance());
                row(out, cells);
            }
        }
        return out.toString();
    }

    private static void header(StringBuilder out, String first, List<Column> columns, String last) {
        List<String> names = new ArrayList<>();
        names.add(first);
        columns.forEach(c -> names.add(c.name()));
        names.add(last);
        row(out, names);
        out.append('|').append("---|".repeat(names.size())).append('\n');
    }

    private static void row(StringBuilder out, List<String> cells) {
        out.append("| ").append(String.join(" | ", cells)).append(" |\n");
    }

    private static String format(String format, double value) {
        return Double.isNaN(value) || Double.isInfinite(value) ? "-" : String.format(Locale.ROOT, format, value);
    }
}
