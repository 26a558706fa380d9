package com.supermarket.loadclient.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The samples scripts/soak.sh wrote: a CSV whose header names the columns, {@code t_s} (seconds
 * since the start) first, {@code fault} (the faults struck since the previous sample as
 * {@code NAME@SECONDS}, joined by {@code +}, or empty) second, numbers after; an empty cell is a value that could not be read (a service being
 * restarted) and becomes NaN. Effectively immutable: nothing writes the arrays after {@link #parse}.
 */
record SoakSamples(double[] seconds, List<String> faults, Map<String, double[]> values) {

    static final String TIME = "t_s";
    static final String FAULT = "fault";

    static SoakSamples read(Path csv) throws IOException {
        return parse(Files.readAllLines(csv, StandardCharsets.UTF_8));
    }

    static SoakSamples parse(List<String> lines) {
        List<String> rows = lines.stream().filter(line -> !line.isBlank()).toList();
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no header: the file is empty");
        }
        String[] header = rows.get(0).split(",", -1);
        if (header.length < 2 || !header[0].equals(TIME) || !header[1].equals(FAULT)) {
            throw new IllegalArgumentException("the header must begin with " + TIME + "," + FAULT + ": " + rows.get(0));
        }
        int samples = rows.size() - 1;
        double[] seconds = new double[samples];
        List<String> faults = new ArrayList<>(samples);
        Map<String, double[]> values = new LinkedHashMap<>();
        for (int column = 2; column < header.length; column++) {
            values.put(header[column], new double[samples]);
        }
        for (int row = 0; row < samples; row++) {
            String[] cells = rows.get(row + 1).split(",", -1);
            if (cells.length != header.length) {
                throw new IllegalArgumentException("line " + (row + 2) + " has " + cells.length + " cells, the header "
                        + header.length);
            }
            seconds[row] = number(cells[0], row);
            if (Double.isNaN(seconds[row])) {
                throw new IllegalArgumentException("line " + (row + 2) + " has no time");
            }
            faults.add(cells[1].strip());
            for (int column = 2; column < header.length; column++) {
                values.get(header[column])[row] = number(cells[column], row);
            }
        }
        return new SoakSamples(seconds, List.copyOf(faults), values);
    }

    private static double number(String cell, int row) {
        String text = cell.strip();
        if (text.isEmpty()) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("line " + (row + 2) + ": not a number: " + text, e);
        }
    }

    double[] column(String name) {
        double[] column = values.get(name);
        return column == null ? new double[0] : Arrays.copyOf(column, column.length);
    }

    int size() {
        return seconds.length;
    }
}
