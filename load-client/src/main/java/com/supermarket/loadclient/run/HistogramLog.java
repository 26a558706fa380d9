package com.supermarket.loadclient.run;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

/**
 * The run's HdrHistogram interval log ({@code --hlog}), in the standard {@code .hlog} format of
 * HdrHistogram's {@link HistogramLogWriter}: one compressed histogram per request type per sample
 * interval, tagged with the type ({@code Tag=POST}, {@code GET_STORE}, {@code GET_TOP10}) and the
 * client's event-loop lag ({@code Tag=LOOP_LAG}). Values are microseconds; the max column is in
 * milliseconds. HdrHistogram's {@code HistogramLogProcessor} (with {@code -tag POST
 * -outputValueUnitRatio 1000}) and HdrHistogram's plotters read it; the intervals add up to the
 * run's whole distribution, or to any window of it.
 * <p>
 * Thread-safety: written by the sampler alone, under the sampler's lock; {@link #close} after the
 * last sample.
 */
final class HistogramLog implements AutoCloseable {

    /** A log that writes nothing (no {@code --hlog}). */
    static final HistogramLog NONE = new HistogramLog(null, null);

    static final String LOOP_LAG = "LOOP_LAG";

    private final PrintStream out;
    private final HistogramLogWriter writer;

    private HistogramLog(PrintStream out, HistogramLogWriter writer) {
        this.out = out;
        this.writer = writer;
    }

    /** A log in {@code file} (created with its folders) whose intervals count from {@code startEpochMillis}. */
    static HistogramLog to(Path file, long startEpochMillis, String label) {
        if (file == null) {
            return NONE;
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            PrintStream out = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.US_ASCII);
            HistogramLogWriter writer = new HistogramLogWriter(out);
            writer.outputComment("[load-client run '" + label.replaceAll("[\\r\\n\\]]", " ") + "': latency of the"
                    + " successful requests in microseconds, tagged by request type; LOOP_LAG: the client's event-loop lag]");
            writer.outputLogFormatVersion();
            writer.outputStartTime(startEpochMillis);
            writer.outputBaseTime(startEpochMillis);
            writer.setBaseTime(startEpochMillis);
            writer.outputLegend();
            return new HistogramLog(out, writer);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the histogram log " + file, e);
        }
    }

    /** Appends one interval, from {@code startSeconds} to {@code endSeconds} after the start. */
    void interval(String tag, double startSeconds, double endSeconds, Histogram micros) {
        if (writer == null) {
            return;
        }
        micros.setTag(tag);
        writer.outputIntervalHistogram(startSeconds, endSeconds, micros, 1000.0);
    }

    @Override
    public void close() {
        if (out == null) {
            return;
        }
        out.close();
        if (out.checkError()) {
            throw new UncheckedIOException(new IOException("writing the histogram log failed"));
        }
    }
}
