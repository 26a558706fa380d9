package com.supermarket.loadclient.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RunResult;

/**
 * Each metric of a run against the same metric of a baseline run, judged against a relative
 * tolerance in the direction that matters: more throughput is better, more latency, failures or
 * CPU per request is worse. A metric missing from either file (an older result file, no POST
 * answered, no CPU measured) is shown and not judged. Stateless.
 */
final class BaselineComparison {

    /** Slack for the tolerance's edge: a change of exactly the tolerance passes despite rounding. */
    private static final double EDGE = 1e-9;

    /** Which way a metric gets better. */
    enum Better {
        HIGHER, LOWER
    }

    /** The outcome of one metric. */
    enum Verdict {
        PASS, FAIL, NOT_JUDGED
    }

    /**
     * One metric of one run against the baseline.
     *
     * @param run      the run's name (label, stores, offered rate)
     * @param metric   the metric's name
     * @param better   which way it gets better
     * @param baseline the baseline's value, NaN if missing
     * @param value    the run's value, NaN if missing
     * @param verdict  pass or fail against the tolerance; not judged when either value is missing
     */
    record Delta(String run, String metric, Better better, double baseline, double value, Verdict verdict) {

        /** (value - baseline) / baseline; infinite when the baseline is 0 and the value is not; NaN if missing. */
        double change() {
            if (Double.isNaN(baseline) || Double.isNaN(value)) {
                return Double.NaN;
            }
            if (value == baseline) {
                return 0;
            }
            return baseline == 0 ? Math.copySign(Double.POSITIVE_INFINITY, value) : (value - baseline) / baseline;
        }
    }

    private record Metric(String name, Better better, ToDoubleFunction<RunResult> value) {
    }

    private BaselineComparison() {
    }

    /** Every metric of {@code run} against {@code baseline}; {@code tolerance} is a fraction (0.1 = 10%). */
    static List<Delta> compare(RunResult baseline, RunResult run, double tolerance) {
        List<Delta> deltas = new ArrayList<>();
        for (Metric metric : metrics(baseline, run)) {
            double base = metric.value().applyAsDouble(baseline);
            double value = metric.value().applyAsDouble(run);
            deltas.add(judge(name(run), metric, base, value, tolerance));
        }
        return deltas;
    }

    /** Whether no judged metric failed. */
    static boolean passed(List<Delta> deltas) {
        return deltas.stream().noneMatch(delta -> delta.verdict() == Verdict.FAIL);
    }

    /**
     * Parses a tolerance: {@code 10%} or {@code 10} (per cent) to 0.1.
     *
     * @throws IllegalArgumentException if negative or not a number
     */
    static double parseTolerance(String text) {
        String number = text.strip().endsWith("%") ? text.strip().substring(0, text.strip().length() - 1) : text.strip();
        double percent;
        try {
            percent = Double.parseDouble(number);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("tolerance '" + text + "' is not a percentage such as 10%", e);
        }
        if (!(percent >= 0) || Double.isInfinite(percent)) {
            throw new IllegalArgumentException("tolerance '" + text + "' must be 0% or more");
        }
        return percent / 100;
    }

    /** The deltas as a Markdown table. */
    static String markdown(List<Delta> deltas) {
        StringBuilder table = new StringBuilder("| run | metric | better | baseline | run | change | verdict |\n"
                + "|---|---|---|---:|---:|---:|---|\n");
        for (Delta delta : deltas) {
            table.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", delta.run(),
                    delta.metric(), delta.better().name().toLowerCase(Locale.ROOT), number(delta.baseline()),
                    number(delta.value()), change(delta), verdict(delta.verdict())));
        }
        return table.toString();
    }

    private static Delta judge(String run, Metric metric, double base, double value, double tolerance) {
        if (Double.isNaN(base) || Double.isNaN(value)) {
            return new Delta(run, metric.name(), metric.better(), base, value, Verdict.NOT_JUDGED);
        }
        Delta delta = new Delta(run, metric.name(), metric.better(), base, value, Verdict.PASS);
        double worse = metric.better() == Better.LOWER ? delta.change() : -delta.change();
        return worse > tolerance + EDGE ? new Delta(run, metric.name(), metric.better(), base, value, Verdict.FAIL) : delta;
    }

    private static List<Metric> metrics(RunResult baseline, RunResult run) {
        List<Metric> metrics = new ArrayList<>(List.of(
                new Metric("successful req/s", Better.HIGHER, RunResult::successThroughput),
                new Metric("POST p50 ms", Better.LOWER, post(LatencySummary::medianMs)),
                new Metric("POST p90 ms", Better.LOWER, post(LatencySummary::p90Ms)),
                new Metric("POST p99 ms", Better.LOWER, post(LatencySummary::p99Ms)),
                new Metric("POST p99.9 ms", Better.LOWER, post(LatencySummary::p999Ms)),
                new Metric("failed %", Better.LOWER,
                        r -> r.requests() == 0 ? Double.NaN : r.failed() * 100.0 / r.requests()),
                new Metric("CPU ms/request " + ReportTable.CLIENT, Better.LOWER,
                        r -> perRequest(r, r.clientCpuSeconds() > 0 ? r.clientCpuSeconds() : Double.NaN))));
        TreeSet<String> processes = new TreeSet<>(baseline.processCpuSeconds().keySet());
        processes.addAll(run.processCpuSeconds().keySet());
        processes.forEach(process -> metrics.add(new Metric("CPU ms/request " + process, Better.LOWER,
                r -> perRequest(r, r.processCpuSeconds().getOrDefault(process, Double.NaN)))));
        return metrics;
    }

    /**
     * A POST percentile; NaN when no POST succeeded or the file predates it (read as 0: a real
     * percentile is never 0, latencies are recorded in whole microseconds of at least 1).
     */
    private static ToDoubleFunction<RunResult> post(ToDoubleFunction<LatencySummary> percentile) {
        return run -> {
            double value = percentile.applyAsDouble(run.postLatency());
            return run.postLatency().count() == 0 || value == 0 ? Double.NaN : value;
        };
    }

    private static double perRequest(RunResult run, double cpuSeconds) {
        return run.successful() == 0 ? Double.NaN : cpuSeconds * 1000 / run.successful();
    }

    private static String name(RunResult run) {
        return run.label() + ", " + run.parameters().maxStores() + " stores"
                + (run.mode().equals("open") ? String.format(Locale.ROOT, ", %,.0f/s", run.parameters().rate()) : "");
    }

    private static String number(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%,.3f", value);
    }

    private static String change(Delta delta) {
        double change = delta.change();
        if (Double.isNaN(change)) {
            return "-";
        }
        return Double.isInfinite(change) ? (change > 0 ? "+inf" : "-inf")
                : String.format(Locale.ROOT, "%+.1f%%", change * 100);
    }

    private static String verdict(Verdict verdict) {
        return switch (verdict) {
        case PASS -> "pass";
        case FAIL -> "**FAIL**";
        case NOT_JUDGED -> "missing, not judged";
        };
    }
}
