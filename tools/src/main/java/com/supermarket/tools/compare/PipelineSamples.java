package com.supermarket.tools.compare;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * The rows of a {@code pipeline.csv} ({@link PipelineSamplerCommand}), and what a run's figures
 * need of them: the value of a column at or just before a time, and the first time from which the
 * stored and counted purchases reach a count. Immutable.
 */
final class PipelineSamples {

    private final List<String> columns;
    private final List<double[]> rows;

    private PipelineSamples(List<String> columns, List<double[]> rows) {
        this.columns = List.copyOf(columns);
        this.rows = List.copyOf(rows);
    }

    /** Parses the CSV; an empty cell is NaN, a row cut short (the sampler killed mid-write) is dropped. */
    static PipelineSamples parse(String csv) {
        String[] lines = csv.split("\n");
        List<String> columns = List.of(lines[0].strip().split(","));
        List<double[]> rows = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            String[] cells = lines[i].strip().split(",", -1);
            if (cells.length != columns.size()) {
                continue;
            }
            double[] row = new double[cells.length];
            for (int c = 0; c < cells.length; c++) {
                row[c] = cells[c].isEmpty() ? Double.NaN : Double.parseDouble(cells[c]);
            }
            rows.add(row);
        }
        return new PipelineSamples(columns, rows);
    }

    /** The columns of watched processes' ticks, by process name, in file order. */
    List<String> processes() {
        return columns.stream().filter(c -> c.endsWith("_ticks")).map(c -> c.substring(0, c.length() - "_ticks".length())).toList();
    }

    /** The value of {@code column} in the last row at or before {@code epochMillis}; empty before the first row or when blank. */
    OptionalDouble at(String column, double epochMillis) {
        int c = columns.indexOf(column);
        double found = Double.NaN;
        for (double[] row : rows) {
            if (row[0] > epochMillis) {
                break;
            }
            found = row[c];
        }
        return Double.isNaN(found) ? OptionalDouble.empty() : OptionalDouble.of(found);
    }

    /**
     * A process's CPU ticks at {@code epochMillis}: the least sum of its column over the rows of
     * the second from then on (or the value at {@link #at} when there are none). The pattern of a
     * process can match short-lived ones too (a broker's command-line tool runs the same Erlang
     * VM), which only add to the sum while they live; the long-lived processes' sum only grows, so
     * the least one is theirs, at most a second late.
     */
    OptionalDouble ticksAt(String process, double epochMillis) {
        int c = columns.indexOf(process + "_ticks");
        double least = Double.NaN;
        for (double[] row : rows) {
            if (row[0] > epochMillis + 1000) {
                break;
            }
            if (row[0] >= epochMillis && !Double.isNaN(row[c]) && !(row[c] >= least)) {
                least = row[c];
            }
        }
        return Double.isNaN(least) ? at(process + "_ticks", epochMillis) : OptionalDouble.of(least);
    }

    /**
     * The time of the first row at or after {@code fromMillis} in which both stored and counted
     * exceed their values at {@code startMillis} by at least {@code purchases}: when the pipeline
     * had drained the run. Empty when no row shows it.
     */
    OptionalDouble drainedAt(double startMillis, double fromMillis, long purchases) {
        OptionalDouble stored0 = at("stored", startMillis);
        OptionalDouble counted0 = at("counted", startMillis);
        if (stored0.isEmpty() || counted0.isEmpty()) {
            return OptionalDouble.empty();
        }
        int stored = columns.indexOf("stored");
        int counted = columns.indexOf("counted");
        for (double[] row : rows) {
            if (row[0] >= fromMillis && row[stored] - stored0.getAsDouble() >= purchases
                    && row[counted] - counted0.getAsDouble() >= purchases) {
                return OptionalDouble.of(row[0]);
            }
        }
        return OptionalDouble.empty();
    }

    /**
     * The largest number of purchases accepted but not yet stored over {@code [startMillis, endMillis]},
     * given the accepted count over time ({@code accepted.applyAsDouble(epochMillis)}).
     */
    OptionalInt backlogPeak(double startMillis, double endMillis, java.util.function.DoubleUnaryOperator accepted) {
        OptionalDouble stored0 = at("stored", startMillis);
        if (stored0.isEmpty()) {
            return OptionalInt.empty();
        }
        int stored = columns.indexOf("stored");
        double peak = 0;
        for (double[] row : rows) {
            if (row[0] >= startMillis && row[0] <= endMillis && !Double.isNaN(row[stored])) {
                peak = Math.max(peak, accepted.applyAsDouble(row[0]) - (row[stored] - stored0.getAsDouble()));
            }
        }
        return OptionalInt.of((int) Math.round(peak));
    }
}
