package com.supermarket.loadclient.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.TimelinePoint;

/** Draws the report's PNG charts with XChart. Stateless; XChart needs {@code java.awt.headless=true} on servers. */
final class Charts {

    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;

    private Charts() {
    }

    /** One series per label, x = stores; runs must be sorted by stores within a label. */
    static void versusStores(List<RunResult> runs, String title, String yTitle, ToDoubleFunction<RunResult> y, Path png)
            throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("stores").yAxisTitle(yTitle).build();
        style(chart);
        byLabel(runs).forEach((label, series) -> {
            double[] xs = series.stream().mapToDouble(run -> run.parameters().maxStores()).toArray();
            double[] ys = series.stream().mapToDouble(y).toArray();
            chart.addSeries(label, xs, ys).setMarker(SeriesMarkers.CIRCLE);
        });
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /**
     * p50 and p99 POST latency against the offered rate of paced runs, one pair of series per
     * label (sorted by rate within a label): where the curve turns up is the platform's knee.
     */
    static void latencyVersusOfferedLoad(List<RunResult> runs, Path png) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title("POST latency vs offered load (paced)")
                .xAxisTitle("offered requests/s").yAxisTitle("ms").build();
        style(chart);
        byLabel(runs).forEach((label, series) -> {
            double[] xs = series.stream().mapToDouble(run -> run.parameters().rate()).toArray();
            chart.addSeries(label + " p50", xs, series.stream().mapToDouble(run -> run.postLatency().medianMs()).toArray())
                    .setMarker(SeriesMarkers.CIRCLE);
            chart.addSeries(label + " p99", xs, series.stream().mapToDouble(run -> run.postLatency().p99Ms()).toArray())
                    .setMarker(SeriesMarkers.DIAMOND);
        });
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Successful requests/s (left axis) and POST p99 (right axis) per second of one run. */
    static void overTime(RunResult run, Path png) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title(String.format("%s, %d stores: throughput and POST p99 over time", run.label(),
                        run.parameters().maxStores()))
                .xAxisTitle("seconds since start").build();
        style(chart);
        List<TimelinePoint> points = run.timeline().isEmpty()
                ? List.of(new TimelinePoint(0, 0, 0, 0, 0, 0, 0))
                : run.timeline();
        double[] t = points.stream().mapToDouble(TimelinePoint::atSeconds).toArray();
        XYSeries throughput = chart.addSeries("successful req/s",
                t, points.stream().mapToDouble(TimelinePoint::requestsPerSecond).toArray());
        throughput.setMarker(SeriesMarkers.NONE);
        throughput.setYAxisGroup(0);
        XYSeries p99 = chart.addSeries("POST p99 ms", t, points.stream().mapToDouble(TimelinePoint::postP99Ms).toArray());
        p99.setMarker(SeriesMarkers.NONE);
        p99.setYAxisGroup(1);
        XYSeries errors = chart.addSeries("failed attempts/s", t,
                points.stream().mapToDouble(TimelinePoint::errorsPerSecond).toArray());
        errors.setMarker(SeriesMarkers.NONE);
        errors.setYAxisGroup(0);
        // Vertical lines where the central and west stores joined, as in the study's figures.
        double top = points.stream().mapToDouble(TimelinePoint::requestsPerSecond).max().orElse(0);
        run.phases().stream().filter(phase -> !phase.name().equals("east") && phase.atSeconds() >= 0).forEach(phase -> {
            chart.addAnnotation(new AnnotationLine(phase.atSeconds(), true, false));
            chart.addAnnotation(new AnnotationText(phase.name() + " starts", phase.atSeconds(),
                    top * (phase.name().equals("west") ? 0.92 : 0.98), false));
        });
        chart.setYAxisGroupTitle(0, "requests/s");
        chart.setYAxisGroupTitle(1, "p99 ms");
        chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** The runs grouped by label, in the order given. */
    private static Map<String, List<RunResult>> byLabel(List<RunResult> runs) {
        Map<String, List<RunResult>> byLabel = new LinkedHashMap<>();
        runs.forEach(run -> byLabel.computeIfAbsent(run.label(), k -> new java.util.ArrayList<>()).add(run));
        return byLabel;
    }

    private static void style(XYChart chart) {
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setPlotGridLinesVisible(true);
        chart.getStyler().setYAxisMin(0.0);
    }
}
