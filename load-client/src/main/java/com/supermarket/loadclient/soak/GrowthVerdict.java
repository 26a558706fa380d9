package com.supermarket.loadclient.soak;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * "Nothing grew without bound": for every size a soak sampled (columns ending in {@code _bytes},
 * and counts ending in {@code _messages} or {@code _keys}; see {@link #judged}), compares its low point over the last
 * third of the run with its low point over the middle third. The low point (10th percentile) is
 * what remains after each collection, truncation or drain: a write-ahead log's size after a
 * snapshot, an emptied queue, Redis after its keys expired. A fault's spike or a GC's saw-tooth moves peaks,
 * not floors; a leak raises the floor. A size grew when its last-third floor is more than
 * {@code tolerance} above the middle third's and by more than an absolute margin (so that 2 ->
 * 40 messages in a queue is not growth). The first third is shown only: it holds the warm-up and
 * the fill to a plateau (the idempotency keys' TTL). A size with fewer than 3 samples in the
 * middle or last third (a heap's live size before its first old-generation collection) is not
 * judged; the verdict fails when no size could be judged. Stateless.
 */
final class GrowthVerdict {

    /** Fewer samples than this in a third judge nothing. */
    static final int MIN_SAMPLES_PER_THIRD = 3;
    private static final double LOW_PERCENTILE = 10;

    /** Verdict of one sampled size. */
    enum Outcome {
        FLAT, GREW, TOO_FEW_SAMPLES
    }

    /** The floors of one size in the first, middle and last third (NaN where a third has no sample). */
    record Finding(String metric, double first, double middle, double last, Outcome outcome) {

    }

    /** When a rise counts as growth: a relative tolerance and absolute margins per kind of column. */
    record Thresholds(double tolerance, double minGrowthBytes, double minGrowthCount) {

        Thresholds {
            if (tolerance < 0 || minGrowthBytes < 0 || minGrowthCount < 0) {
                throw new IllegalArgumentException("the tolerance and the margins must be 0 or positive");
            }
        }
    }

    private GrowthVerdict() {
    }

    /**
     * Sizes, except a heap's occupancy at the sample ({@code _heap_used_bytes}): between collections
     * of the old generation its floor climbs by design (G1 collects the old generation only past
     * its occupancy threshold), so only the live size after such a collection is judged.
     */
    static boolean judged(String column) {
        return !column.endsWith("_heap_used_bytes")
                && (column.endsWith("_bytes") || column.endsWith("_messages") || column.endsWith("_keys"));
    }

    static List<Finding> judge(SoakSamples samples, Thresholds thresholds) {
        double[] t = samples.seconds();
        double start = t.length == 0 ? 0 : t[0];
        double span = t.length == 0 ? 0 : t[t.length - 1] - start;
        List<Finding> findings = new ArrayList<>();
        for (Map.Entry<String, double[]> column : samples.values().entrySet()) {
            if (!judged(column.getKey())) {
                continue;
            }
            double[] first = third(t, column.getValue(), start, start + span / 3, false);
            double[] middle = third(t, column.getValue(), start + span / 3, start + 2 * span / 3, false);
            double[] last = third(t, column.getValue(), start + 2 * span / 3, start + span, true);
            double middleFloor = low(middle);
            double lastFloor = low(last);
            Outcome outcome;
            if (middle.length < MIN_SAMPLES_PER_THIRD || last.length < MIN_SAMPLES_PER_THIRD) {
                outcome = Outcome.TOO_FEW_SAMPLES;
            } else {
                double margin = column.getKey().endsWith("_bytes") ? thresholds.minGrowthBytes() : thresholds.minGrowthCount();
                boolean grew = lastFloor > middleFloor * (1 + thresholds.tolerance()) && lastFloor - middleFloor > margin;
                outcome = grew ? Outcome.GREW : Outcome.FLAT;
            }
            findings.add(new Finding(column.getKey(), low(first), middleFloor, lastFloor, outcome));
        }
        return findings;
    }

    /** The values sampled in [from, to) (or [from, to] for the last third), NaN left out. */
    private static double[] third(double[] t, double[] values, double from, double to, boolean closed) {
        return java.util.stream.IntStream.range(0, t.length)
                .filter(i -> t[i] >= from && (t[i] < to || closed && t[i] <= to) && !Double.isNaN(values[i]))
                .mapToDouble(i -> values[i]).toArray();
    }

    /** The 10th percentile (nearest rank), NaN for none. */
    static double low(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(LOW_PERCENTILE / 100 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    /** A Markdown table of the findings and a last line: the verdict. */
    static String format(List<Finding> findings, Thresholds thresholds) {
        StringBuilder out = new StringBuilder();
        out.append("| size (low point of each third) | first third | middle third | last third | last vs middle | verdict |\n");
        out.append("|---|---:|---:|---:|---:|---|\n");
        for (Finding finding : findings) {
            boolean bytes = finding.metric().endsWith("_bytes");
            double change = finding.middle() == 0 ? (finding.last() == 0 ? 0 : Double.POSITIVE_INFINITY)
                    : (finding.last() / finding.middle() - 1) * 100;
            out.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", finding.metric(),
                    amount(finding.first(), bytes), amount(finding.middle(), bytes), amount(finding.last(), bytes),
                    Double.isNaN(change) ? "n/a"
                            : Double.isInfinite(change) ? "from 0" : String.format(Locale.ROOT, "%+.0f %%", change),
                    switch (finding.outcome()) {
                        case FLAT -> "flat";
                        case GREW -> "GREW";
                        case TOO_FEW_SAMPLES -> "too few samples";
                    }));
        }
        List<String> grew = findings.stream().filter(f -> f.outcome() == Outcome.GREW).map(Finding::metric).toList();
        List<String> unjudged = findings.stream().filter(f -> f.outcome() == Outcome.TOO_FEW_SAMPLES)
                .map(Finding::metric).toList();
        String limits = String.format(Locale.ROOT, "%.0f %% and %s or %,.0f", thresholds.tolerance() * 100,
                amount(thresholds.minGrowthBytes(), true), thresholds.minGrowthCount());
        out.append('\n');
        if (findings.isEmpty()) {
            out.append("growth: FAILED: no size was sampled\n");
        } else if (unjudged.size() == findings.size()) {
            out.append("growth: FAILED: no size had ").append(MIN_SAMPLES_PER_THIRD)
                    .append(" samples in each of the last two thirds (a longer run, or more samples)\n");
        } else if (grew.isEmpty()) {
            out.append("growth: nothing grew without bound (").append(findings.size() - unjudged.size())
                    .append(" sizes, last third within ").append(limits).append(" of the middle third)\n");
        } else {
            out.append("growth: FAILED: grew beyond ").append(limits).append(": ").append(String.join(", ", grew))
                    .append('\n');
        }
        if (!unjudged.isEmpty() && unjudged.size() < findings.size()) {
            out.append("not judged (fewer than ").append(MIN_SAMPLES_PER_THIRD).append(" samples in a third): ")
                    .append(String.join(", ", unjudged)).append('\n');
        }
        return out.toString();
    }

    /** Passed: some size could be judged, and none grew. */
    static boolean passed(List<Finding> findings) {
        return findings.stream().anyMatch(f -> f.outcome() == Outcome.FLAT)
                && findings.stream().noneMatch(f -> f.outcome() == Outcome.GREW);
    }

    private static String amount(double value, boolean bytes) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        return bytes ? String.format(Locale.ROOT, "%.1f MiB", value / (1 << 20)) : String.format(Locale.ROOT, "%,.0f", value);
    }
}
