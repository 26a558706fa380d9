package com.supermarket.loadclient.soak;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code soak-report}: reads the samples scripts/soak.sh wrote, draws them over time
 * ({@link SoakChart}) and judges whether anything grew without bound ({@link GrowthVerdict}).
 * Picocli fills the fields; not thread-safe.
 */
@Command(name = "soak-report", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        description = {
                "Reads a soak's samples (CSV: t_s, fault, then one column per measure), writes a PNG of stacked panels",
                "over time with a line at each fault, and prints per size (columns ending in _bytes, _messages, _keys)",
                "its low point (10th percentile) in each third of the run. A size GREW when its last-third low point is",
                "more than --tolerance above the middle third's and by more than --min-growth-bytes (sizes) or",
                "--min-growth-count (messages, keys). Exit status: 0 when nothing grew, 1 when something grew or a third",
                "had fewer than 3 samples of a size, 2 on bad usage or an unreadable file." })
public final class SoakReportCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "SAMPLES.csv", description = "The samples scripts/soak.sh wrote.")
    private Path samplesFile;

    @Option(names = "--chart", paramLabel = "FILE.png", description = "Where the chart goes (default: beside the CSV, soak.png).")
    private Path chart;

    @Option(names = "--title", description = "The chart's title.")
    private String title = "Soak";

    @Option(names = "--tolerance", description = "Growth beyond this fraction of the middle third's low point, ...")
    private double tolerance = 0.25;

    @Option(names = "--min-growth-bytes", description = "... and beyond this many bytes, is growth (sizes).")
    private double minGrowthBytes = 16 * 1024 * 1024;

    @Option(names = "--min-growth-count", description = "... and beyond this many, is growth (messages, keys).")
    private double minGrowthCount = 1000;

    @Override
    public Integer call() throws Exception {
        GrowthVerdict.Thresholds thresholds;
        try {
            thresholds = new GrowthVerdict.Thresholds(tolerance, minGrowthBytes, minGrowthCount);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        SoakSamples samples;
        try {
            samples = SoakSamples.read(samplesFile);
        } catch (java.io.IOException | IllegalArgumentException e) {
            System.err.println("[soak-report] cannot read " + samplesFile + ": " + e.getMessage());
            return 2;
        }
        Path png = chart != null ? chart : samplesFile.toAbsolutePath().resolveSibling("soak.png");
        int panels = SoakChart.draw(samples, title, png);
        List<GrowthVerdict.Finding> findings = GrowthVerdict.judge(samples, thresholds);
        System.out.print(GrowthVerdict.format(findings, thresholds));
        System.out.println("chart        " + png + " (" + panels + " panels, " + samples.size() + " samples)");
        return GrowthVerdict.passed(findings) ? 0 : 1;
    }
}
