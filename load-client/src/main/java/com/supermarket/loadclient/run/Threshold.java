package com.supermarket.loadclient.run;

import java.util.Locale;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.ThresholdResult;

/**
 * A bound on one of the run's figures ({@code run --threshold}), checked once the run is over, as
 * k6's thresholds are: {@code POST.p99<50ms}, {@code GET_STORE.max<=1s}, {@code failed<0.1%},
 * {@code failed<=10}, {@code rps>5000}. Immutable.
 *
 * @param expression the threshold as given
 * @param metric     the figure, normalised: {@code POST.p99}, {@code failed}, {@code rps}
 * @param type       the request type of a latency figure, else null
 * @param operator   {@code <}, {@code <=}, {@code >} or {@code >=}
 * @param limit      the bound in {@code unit}
 * @param unit       {@code ms}, {@code %}, {@code requests} or {@code req/s}
 */
record Threshold(String expression, String metric, RequestType type, String operator, double limit, String unit) {

    /** What {@code --threshold} accepts, for the help and for error messages. */
    static final String SYNTAX = "METRIC OP VALUE: TYPE.STAT (TYPE POST, GET_STORE, GET_TOP10; STAT p50, p90, p95, p99, "
            + "p99.9, p99.99, max, mean; VALUE in ms, s or us, ms if bare), failed (VALUE N% of the requests, or a count N), "
            + "rps (successful requests/s over the run); OP <, <=, >, >=";

    private static final Pattern FORM = Pattern.compile("\\s*([A-Za-z0-9_.]+?)\\s*(<=|>=|<|>)\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([A-Za-zµ%]*)\\s*");
    private static final Pattern LATENCY = Pattern.compile("([A-Za-z0-9_]+)\\.(p50|p90|p95|p99|p99\\.9|p99\\.99|max|mean)",
            Pattern.CASE_INSENSITIVE);

    /**
     * @throws IllegalArgumentException with a message saying what is wrong and what is accepted
     */
    static Threshold parse(String expression) {
        Matcher form = FORM.matcher(expression);
        if (!form.matches()) {
            throw refused(expression, "not METRIC OP VALUE");
        }
        String metric = form.group(1);
        String operator = form.group(2);
        double value = Double.parseDouble(form.group(3));
        String unit = form.group(4).toLowerCase(Locale.ROOT);
        Matcher latency = LATENCY.matcher(metric);
        if (latency.matches()) {
            RequestType type = typeNamed(latency.group(1), expression);
            double factor = switch (unit) {
                case "", "ms" -> 1;
                case "s" -> 1000;
                case "us", "µs" -> 0.001;
                default -> throw refused(expression, "a latency takes ms, s or us, not '" + unit + "'");
            };
            return new Threshold(expression, type.csvName() + "." + latency.group(2).toLowerCase(Locale.ROOT), type, operator, value * factor, "ms");
        }
        switch (metric.toLowerCase(Locale.ROOT)) {
            case "failed" -> {
                if (unit.equals("%")) {
                    return new Threshold(expression, "failed", null, operator, value, "%");
                }
                if (!unit.isEmpty() || value != Math.rint(value)) {
                    throw refused(expression, "failed takes a share of the requests (failed<0.1%) or a whole count (failed<=10)");
                }
                return new Threshold(expression, "failed", null, operator, value, "requests");
            }
            case "rps" -> {
                if (!unit.isEmpty()) {
                    throw refused(expression, "rps takes a bare number of successful requests per second");
                }
                return new Threshold(expression, "rps", null, operator, value, "req/s");
            }
            default -> throw refused(expression, "no metric '" + metric + "'");
        }
    }

    /** Checks the threshold against a finished run. */
    ThresholdResult check(RunResult result) {
        Double measured = measure(result);
        boolean passed = measured != null && switch (operator) {
            case "<" -> measured < limit;
            case "<=" -> measured <= limit;
            case ">" -> measured > limit;
            default -> measured >= limit;
        };
        return new ThresholdResult(expression, metric, operator, limit, unit, measured, passed);
    }

    private Double measure(RunResult result) {
        if (type != null) {
            LatencySummary latency = result.latency().get(type);
            return latency == null || latency.count() == 0 ? null : statistic().applyAsDouble(latency);
        }
        return switch (unit) {
            case "%" -> result.requests() == 0 ? null : 100.0 * result.failed() / result.requests();
            case "requests" -> (double) result.failed();
            default -> result.successThroughput();
        };
    }

    private ToDoubleFunction<LatencySummary> statistic() {
        return switch (metric.substring(metric.indexOf('.') + 1)) {
            case "p50" -> LatencySummary::medianMs;
            case "p90" -> LatencySummary::p90Ms;
            case "p95" -> LatencySummary::p95Ms;
            case "p99" -> LatencySummary::p99Ms;
            case "p99.9" -> LatencySummary::p999Ms;
            case "p99.99" -> LatencySummary::p9999Ms;
            case "max" -> LatencySummary::maxMs;
            default -> LatencySummary::meanMs;
        };
    }

    private static RequestType typeNamed(String name, String expression) {
        for (RequestType type : RequestType.values()) {
            if (type.csvName().equalsIgnoreCase(name)) {
                return type;
            }
        }
        throw refused(expression, "no request type '" + name + "' (" + typeNames() + ")");
    }

    private static String typeNames() {
        StringBuilder names = new StringBuilder();
        for (RequestType type : RequestType.values()) {
            names.append(names.isEmpty() ? "" : ", ").append(type.csvName());
        }
        return names.toString();
    }

    private static IllegalArgumentException refused(String expression, String why) {
        return new IllegalArgumentException("'" + expression + "': " + why + "; expected " + SYNTAX);
    }
}
