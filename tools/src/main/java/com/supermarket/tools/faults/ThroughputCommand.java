package com.supermarket.tools.faults;

import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code throughput}: a run's purchases per second, and its share of a baseline's. Not thread-safe. */
@Command(name = "throughput", mixinStandardHelpOptions = true,
        description = { "A run's purchases per second, and its share of a baseline's.",
                "Prints \"THROUGHPUT RELATIVE\": COUNT / (END - START) per second, rounded, and that as a percentage",
                "of --baseline (\"n/a\" without one)." })
public final class ThroughputCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "COUNT", description = "e.g. the purchases accepted.")
    private long count;

    @Parameters(index = "1", paramLabel = "START", description = "Seconds (e.g. date +%%s.%%N).")
    private double start;

    @Parameters(index = "2", paramLabel = "END", description = "Seconds.")
    private double end;

    @Option(names = "--baseline", paramLabel = "PER_SECOND", description = "The throughput without a fault.")
    private Long baseline;

    @Override
    public Integer call() {
        System.out.println(line(count, end - start, baseline));
        return 0;
    }

    /** "THROUGHPUT RELATIVE" for {@code count} in {@code seconds}; the baseline may be null. */
    static String line(long count, double seconds, Long baseline) {
        if (!(seconds > 0)) {
            throw new IllegalArgumentException("the run took no time: " + seconds + " s");
        }
        long throughput = Math.round(count / seconds);
        String relative = baseline == null || baseline <= 0 ? "n/a"
                : String.format(Locale.ROOT, "%.0f%%", 100.0 * throughput / baseline);
        return throughput + " " + relative;
    }
}
