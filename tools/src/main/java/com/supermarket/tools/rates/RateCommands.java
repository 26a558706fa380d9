package com.supermarket.tools.rates;

import java.util.Locale;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The arithmetic of the fault and soak scripts (bash has no fractions): each static method a
 * command ({@link com.supermarket.tools.Tools} adds them), returning its exit status. Stateless.
 */
public final class RateCommands {

    private RateCommands() {
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true, description = {
        "A run's purchases per second, and its share of a baseline's.",
        "Prints \"THROUGHPUT RELATIVE\": COUNT / (END - START) per second, rounded, and that as a percentage of",
        "--baseline (\"n/a\" without one)." })
    static int throughput(
            @Parameters(index = "0", paramLabel = "COUNT", description = "e.g. the purchases accepted.") long count,
            @Parameters(index = "1", paramLabel = "START", description = "Seconds (date +%%s.%%N).") double start,
            @Parameters(index = "2", paramLabel = "END", description = "Seconds.") double end,
            @Option(names = "--baseline", paramLabel = "PER_SECOND", description = "The throughput without a fault.") Long baseline) {
        System.out.println(throughputLine(count, end - start, baseline));
        return 0;
    }

    @Command(name = "soak-plan", mixinStandardHelpOptions = true, description = {
        "A soak's purchases per hour and store, and its fault interval.",
        "Prints \"PER_HOUR FAULT_SECONDS\": the purchases per hour and store that make each of --stores send",
        "9 hours of purchases (and --get-ratio GETs per purchase) in --minutes at --rate requests/s in all, and",
        "--fault-every minutes in seconds; exit 1 when the purchases per hour come to less than one." })
    static int soakPlan(
            @Option(names = "--minutes", required = true) double minutes,
            @Option(names = "--rate", required = true, description = "Requests per second, all stores together.") double rate,
            @Option(names = "--stores", required = true) int stores,
            @Option(names = "--get-ratio", defaultValue = "0", description = "GETs per POST.") double getRatio,
            @Option(names = "--fault-every", defaultValue = "0", description = "Minutes between faults (0: none).") double faultEvery) {
        long perHour = perHour(minutes, rate, stores, getRatio);
        System.out.println(perHour + " " + Math.round(faultEvery * 60));
        return perHour >= 1 ? 0 : 1;
    }

    /** "THROUGHPUT RELATIVE" for {@code count} in {@code seconds}; the baseline may be null. */
    static String throughputLine(long count, double seconds, Long baseline) {
        if (!(seconds > 0)) {
            throw new IllegalArgumentException("the run took no time: " + seconds + " s");
        }
        long throughput = Math.round(count / seconds);
        String relative = baseline == null || baseline <= 0 ? "n/a"
                : String.format(Locale.ROOT, "%.0f%%", 100.0 * throughput / baseline);
        return throughput + " " + relative;
    }

    /** Purchases per hour and store so that 9 hours of them, with their GETs, take {@code minutes} at {@code rate}. */
    static long perHour(double minutes, double rate, int stores, double getRatio) {
        if (stores < 1 || getRatio < 0) {
            throw new IllegalArgumentException("stores must be positive and the GET ratio not negative");
        }
        return Math.round(minutes * 60 * rate / (9.0 * stores * (1 + getRatio)));
    }
}
