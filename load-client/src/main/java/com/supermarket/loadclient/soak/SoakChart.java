package com.supermarket.loadclient.soak;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import javax.imageio.ImageIO;

import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Draws a soak's samples as one PNG of stacked panels sharing the time axis (accepted purchases/s,
 * heap, state sizes, queue depth, idempotency keys, CPU per purchase), each with a vertical line
 * where a fault struck. Columns are placed by their names' conventions (see {@link #PANELS});
 * a panel without columns is left out. Stateless; needs {@code java.awt.headless=true} on servers.
 */
final class SoakChart {

    static final int WIDTH = 1000;
    static final int PANEL_HEIGHT = 300;
    private static final double MIB = 1 << 20;

    /** One panel: its title, y axis, which columns it draws and the divisor of their values. */
    record Panel(String title, String yTitle, Predicate<String> columns, double divisor) {
    }

    static final List<Panel> PANELS = List.of(
            new Panel("Purchases accepted per second (purchase-api)", "purchases/s", name -> name.endsWith("_per_s"), 1),
            new Panel("Heap: used at the sample, live after the last collection", "MiB",
                    name -> name.contains("_heap_") && name.endsWith("_bytes"), MIB),
            new Panel("State: store-service's write-ahead log and snapshots, Redis memory", "MiB",
                    name -> !name.contains("_heap_") && name.endsWith("_bytes"), MIB),
            new Panel("Messages waiting in the shard queues", "messages", name -> name.endsWith("_messages"), 1),
            new Panel("Idempotency keys in Redis", "keys", name -> name.endsWith("_keys"), 1),
            new Panel("CPU per accepted purchase over the interval", "CPU ms", name -> name.startsWith("cpu_ms_"), 1));

    private SoakChart() {
    }

    /** Returns the panels drawn (those with at least one column). */
    static int draw(SoakSamples samples, String title, Path png) throws IOException {
        List<XYChart> charts = new ArrayList<>();
        for (Panel panel : PANELS) {
            List<String> columns = samples.values().keySet().stream().filter(panel.columns()).toList();
            if (!columns.isEmpty()) {
                charts.add(panel(samples, charts.isEmpty() ? title + ": " + panel.title() : panel.title(), panel, columns));
            }
        }
        BufferedImage image = new BufferedImage(WIDTH, PANEL_HEIGHT * Math.max(1, charts.size()), BufferedImage.TYPE_INT_RGB);
        Graphics2D graphics = image.createGraphics();
        graphics.setColor(Color.WHITE);
        graphics.fillRect(0, 0, image.getWidth(), image.getHeight());
        for (int i = 0; i < charts.size(); i++) {
            Graphics2D slice = (Graphics2D) graphics.create(0, i * PANEL_HEIGHT, WIDTH, PANEL_HEIGHT);
            charts.get(i).paint(slice, WIDTH, PANEL_HEIGHT);
            slice.dispose();
        }
        graphics.dispose();
        ImageIO.write(image, "png", png.toFile());
        return charts.size();
    }

    private static XYChart panel(SoakSamples samples, String title, Panel panel, List<String> columns) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(PANEL_HEIGHT).title(title)
                .xAxisTitle("minutes since start").yAxisTitle(panel.yTitle()).build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridLinesVisible(true);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        double[] minutes = Arrays.stream(samples.seconds()).map(s -> s / 60).toArray();
        double top = 0;
        for (String column : columns) {
            double[] ys = Arrays.stream(samples.values().get(column)).map(v -> v / panel.divisor()).toArray();
            top = Math.max(top, Arrays.stream(ys).filter(v -> !Double.isNaN(v)).max().orElse(0));
            chart.addSeries(label(column), minutes, ys).setMarker(SeriesMarkers.NONE);
        }
        for (Map.Entry<Double, String> fault : faults(samples).entrySet()) {
            chart.addAnnotation(new AnnotationLine(fault.getKey(), true, false));
            chart.addAnnotation(new AnnotationText(fault.getValue(), fault.getKey(), top * 0.95, false));
        }
        return chart;
    }

    /**
     * The faults by the minute they struck: a fault cell holds {@code NAME@SECONDS} (several joined
     * by {@code +}); a fault without its time is placed at the sample that reported it.
     */
    static Map<Double, String> faults(SoakSamples samples) {
        Map<Double, String> faults = new java.util.TreeMap<>();
        for (int i = 0; i < samples.size(); i++) {
            for (String fault : samples.faults().get(i).split("\\+")) {
                int at = fault.lastIndexOf('@');
                String name = at >= 0 ? fault.substring(0, at) : fault;
                double seconds = samples.seconds()[i];
                if (at >= 0) {
                    try {
                        seconds = Double.parseDouble(fault.substring(at + 1));
                    } catch (NumberFormatException e) {
                        // no time given: at the sample
                    }
                }
                if (!name.isBlank()) {
                    faults.put(seconds / 60, name);
                }
            }
        }
        return faults;
    }

    /** A column's legend: its name without the unit the axis already says. */
    static String label(String column) {
        return column.replaceFirst("^cpu_ms_per_purchase_", "").replaceFirst("_bytes$", "")
                .replaceFirst("_messages$", "").replaceFirst("_keys$", "");
    }
}
