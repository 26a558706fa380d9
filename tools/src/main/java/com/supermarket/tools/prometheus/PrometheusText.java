package com.supermarket.tools.prometheus;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * Prometheus' text exposition format, as the services' {@code /actuator/prometheus} writes it:
 * one sample a line, {@code name{label="value",...} value [timestamp]}; comments and blank lines
 * skipped, a line that does not parse skipped too (a scrape cut short). Immutable.
 */
public final class PrometheusText {

    /** One sample: its metric name, labels (in their order) and value; {@code line} as written. */
    public record Sample(String name, Map<String, String> labels, double value, String line) {

        /** Whether every label of {@code wanted} has that value here. */
        public boolean hasLabels(Map<String, String> wanted) {
            return wanted.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
        }
    }

    private final List<Sample> samples;

    private PrometheusText(List<Sample> samples) {
        this.samples = List.copyOf(samples);
    }

    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            Sample sample = parseLine(line.strip());
            if (sample != null) {
                samples.add(sample);
            }
        }
        return new PrometheusText(samples);
    }

    public List<Sample> samples() {
        return samples;
    }

    /** The samples of metric {@code name} with every label of {@code labels}. */
    public List<Sample> select(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.hasLabels(labels)).toList();
    }

    /** The sum of the selected samples' values; empty when there is none. */
    public OptionalDouble sum(String name, Map<String, String> labels) {
        List<Sample> selected = select(name, labels);
        return selected.isEmpty() ? OptionalDouble.empty()
                : OptionalDouble.of(selected.stream().mapToDouble(Sample::value).sum());
    }

    private static Sample parseLine(String line) {
        if (line.isEmpty() || line.startsWith("#")) {
            return null;
        }
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i = parseLabels(line, i + 1, labels);
            if (i < 0) {
                return null;
            }
        }
        String[] rest = line.substring(i).strip().split("\\s+");
        if (name.isEmpty() || rest.length == 0 || rest[0].isEmpty()) {
            return null;
        }
        try {
            return new Sample(name, labels, parseValue(rest[0]), line);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Reads {@code key="value",...}} from {@code i}; the index after the closing brace, -1 if malformed. */
    private static int parseLabels(String line, int i, Map<String, String> labels) {
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '}') {
                return i + 1;
            }
            if (c == ',' || c == ' ') {
                i++;
                continue;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                return -1;
            }
            String key = line.substring(i, eq).strip();
            StringBuilder value = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char v = line.charAt(j);
                if (v == '\\' && j + 1 < line.length()) {
                    char next = line.charAt(++j);
                    value.append(next == 'n' ? '\n' : next);
                } else {
                    value.append(v);
                }
            }
            if (j >= line.length()) {
                return -1;
            }
            labels.put(key, value.toString());
            i = j + 1;
        }
        return -1;
    }

    private static double parseValue(String text) {
        return switch (text) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(text);
        };
    }
}
