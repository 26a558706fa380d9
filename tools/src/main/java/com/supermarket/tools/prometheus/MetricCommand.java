package com.supermarket.tools.prometheus;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;

import com.supermarket.tools.Input;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code metric}: one metric of a Prometheus scrape, summed, or its sample lines. Not thread-safe. */
@Command(name = "metric", mixinStandardHelpOptions = true, sortOptions = false,
        description = { "The sum of one metric of a Prometheus scrape, or its sample lines.",
                "Reads a Prometheus scrape (a file, or standard input) and prints the sum of metric NAME's samples",
                "with the labels given, as a whole number; nothing (exit 1) when it has no such sample.",
                "With --lines: the selected samples' lines as written instead (exit 0 even when none)." })
public final class MetricCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The metric, e.g. api_purchases_accepted_total.")
    private String name;

    @Parameters(index = "1", arity = "0..1", paramLabel = "FILE", description = "The scrape (default: standard input).")
    private Path file;

    @Option(names = "--label", paramLabel = "KEY=VALUE", description = "Only samples with this label value; repeatable.")
    private Map<String, String> labels = new LinkedHashMap<>();

    @Option(names = "--lines", description = "Print the selected samples' lines instead of their sum.")
    private boolean lines;

    @Option(names = "--positive", description = "Only samples whose value is above zero.")
    private boolean positive;

    @Option(names = "--zero-as-none", description = "A sum of 0 prints nothing (exit 1), e.g. a size not yet known.")
    private boolean zeroAsNone;

    @Override
    public Integer call() {
        PrometheusText scrape = PrometheusText.parse(Input.read(file));
        List<PrometheusText.Sample> selected = scrape.select(name, labels).stream()
                .filter(s -> !positive || s.value() > 0).toList();
        if (lines) {
            selected.forEach(s -> System.out.println(s.line()));
            return 0;
        }
        OptionalDouble sum = selected.isEmpty() ? OptionalDouble.empty()
                : OptionalDouble.of(selected.stream().mapToDouble(PrometheusText.Sample::value).sum());
        if (sum.isEmpty() || (zeroAsNone && sum.getAsDouble() == 0)) {
            return 1;
        }
        System.out.println(wholeNumber(sum.getAsDouble()));
        return 0;
    }

    /** A value as a whole number, rounded half up (counters and byte sizes print as written). */
    static String wholeNumber(double value) {
        return String.format(java.util.Locale.ROOT, "%.0f", value);
    }
}
