package com.supermarket.loadclient.run;

import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

import io.micrometer.core.instrument.Timer;

import com.supermarket.loadclient.result.RequestType;

/**
 * Latencies of the successful requests of the stores on one event loop, per request type, and the
 * loop's own lag ({@link LoopLag}), in microseconds; also into the run's {@link LiveMetrics} when it
 * has them.
 * <p>
 * Thread-safety: exactly one writer (the loop's thread) calls {@link #recordSuccess} and
 * {@link #recordLag}; one reader (the sampler) may concurrently take {@link #intervalHistogram
 * interval histograms} and {@link #intervalLag}, which the wait-free {@link SingleWriterRecorder}
 * allows without a lock on the writer's path. The exact
 * count, sum and max, and the paced starts, are plain fields read only after every store of the
 * loop has finished.
 */
final class LoopMetrics {

    private static final RequestType[] TYPES = RequestType.values();

    private final SingleWriterRecorder[] recorders = new SingleWriterRecorder[TYPES.length];
    private final long[] count = new long[TYPES.length];
    private final long[] sumMicros = new long[TYPES.length];
    private final long[] maxMicros = new long[TYPES.length];
    private final SingleWriterRecorder lag = new SingleWriterRecorder(3);
    private long pacedStarts;
    private long lateStarts;
    private long lateSumNanos;
    private long lateMaxNanos;
    // Null without --metrics-port: the hot path then only tests for null.
    private final LiveMetrics live;
    private final Timer[] liveLatency;

    LoopMetrics() {
        this(null);
    }

    /** @param live the run's live metrics, or null for none */
    LoopMetrics(LiveMetrics live) {
        this.live = live;
        this.liveLatency = live == null ? null : live.latencyTimers();
        for (int i = 0; i < TYPES.length; i++) {
            // 3 significant digits, auto-resizing. Not packed: there are only a few loops, and
            // adding packed histograms up was a third of the client's CPU when every store had
            // its own (JFR, see the README).
            recorders[i] = new SingleWriterRecorder(3);
        }
    }

    void recordSuccess(RequestType type, long micros) {
        int i = type.ordinal();
        recorders[i].recordValue(micros);
        count[i]++;
        sumMicros[i] += micros;
        if (micros > maxMicros[i]) {
            maxMicros[i] = micros;
        }
        if (liveLatency != null) {
            liveLatency[i].record(micros, TimeUnit.MICROSECONDS);
        }
    }

    /** A request (not a late re-send) started: for the live in-flight count. */
    void recordStart() {
        if (live != null) {
            live.started();
        }
    }

    /**
     * A paced request started.
     *
     * @param lateNanos how long after its intended time it started, when it could not start on
     *                  time for want of a free connection; negative when it started on time
     */
    void recordPacedStart(long lateNanos) {
        pacedStarts++;
        if (lateNanos >= 0) {
            lateStarts++;
            lateSumNanos += lateNanos;
            if (lateNanos > lateMaxNanos) {
                lateMaxNanos = lateNanos;
            }
            if (live != null) {
                live.lateStart();
            }
        }
    }

    /** @param periodMicros the probe's period, for the expected-interval correction of a long lag */
    void recordLag(long micros, long periodMicros) {
        lag.recordValueWithExpectedInterval(micros, periodMicros);
    }

    /** The values recorded since the previous call (sampler thread only). */
    Histogram intervalHistogram(RequestType type) {
        return recorders[type.ordinal()].getIntervalHistogram();
    }

    /** The loop's lags recorded since the previous call (sampler thread only). */
    Histogram intervalLag() {
        return lag.getIntervalHistogram();
    }

    long count(RequestType type) {
        return count[type.ordinal()];
    }

    long sumMicros(RequestType type) {
        return sumMicros[type.ordinal()];
    }

    long maxMicros(RequestType type) {
        return maxMicros[type.ordinal()];
    }

    long pacedStarts() {
        return pacedStarts;
    }

    long lateStarts() {
        return lateStarts;
    }

    long lateSumNanos() {
        return lateSumNanos;
    }

    long lateMaxNanos() {
        return lateMaxNanos;
    }
}
