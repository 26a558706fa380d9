package com.supermarket.loadclient.run;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

import com.supermarket.loadclient.result.RequestType;

/**
 * Latencies of one store thread's successful requests, per request type, in microseconds.
 * <p>
 * Thread-safety: exactly one writer (the store's thread) calls {@link #recordSuccess}; one reader
 * (the sampler) may concurrently take {@link #intervalHistogram interval histograms}, which the
 * wait-free {@link SingleWriterRecorder} allows without a lock on the writer's path. The exact
 * count, sum and max are plain fields read only after the writer thread has been joined.
 */
final class StoreMetrics {

    private static final RequestType[] TYPES = RequestType.values();

    private final SingleWriterRecorder[] recorders = new SingleWriterRecorder[TYPES.length];
    private final long[] count = new long[TYPES.length];
    private final long[] sumMicros = new long[TYPES.length];
    private final long[] maxMicros = new long[TYPES.length];

    StoreMetrics() {
        for (int i = 0; i < TYPES.length; i++) {
            // 3 significant digits, auto-resizing and packed: a few KB per store instead of
            // ~200 KB, so 1024 stores x 3 types stay small.
            recorders[i] = new SingleWriterRecorder(3, true);
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
    }

    /** The values recorded since the previous call (sampler thread only). */
    Histogram intervalHistogram(RequestType type) {
        return recorders[type.ordinal()].getIntervalHistogram();
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
}
