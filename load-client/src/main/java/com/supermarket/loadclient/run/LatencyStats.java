package com.supermarket.loadclient.run;

import org.HdrHistogram.Histogram;

import com.supermarket.loadclient.result.LatencySummary;

/**
 * Turns a microsecond histogram plus the exact count, sum and max into a {@link LatencySummary}
 * in milliseconds. Stateless.
 */
final class LatencyStats {

    private LatencyStats() {
    }

    static LatencySummary summarize(Histogram micros, long exactCount, long exactSumMicros, long exactMaxMicros) {
        if (exactCount == 0) {
            return LatencySummary.empty();
        }
        return new LatencySummary(exactCount,
                exactSumMicros / (double) exactCount / 1000.0,
                percentileMs(micros, 50.0, exactMaxMicros),
                percentileMs(micros, 90.0, exactMaxMicros),
                percentileMs(micros, 95.0, exactMaxMicros),
                percentileMs(micros, 99.0, exactMaxMicros),
                percentileMs(micros, 99.9, exactMaxMicros),
                percentileMs(micros, 99.99, exactMaxMicros),
                exactMaxMicros / 1000.0);
    }

    /** A summary from the histogram alone: its mean and max are within its 3 significant digits. */
    static LatencySummary summarize(Histogram micros) {
        long count = micros.getTotalCount();
        return summarize(micros, count, Math.round(micros.getMean() * count), micros.getMaxValue());
    }

    private static double percentileMs(Histogram micros, double percentile, long exactMaxMicros) {
        return percentileMicros(micros, percentile, exactMaxMicros) / 1000.0;
    }

    /**
     * The nearest-rank percentile: the upper edge of the bucket holding the value of rank
     * ceil(p/100 * n), capped at the exact maximum so that no percentile exceeds the max.
     */
    static long percentileMicros(Histogram micros, double percentile, long exactMaxMicros) {
        return Math.min(micros.getValueAtPercentile(percentile), exactMaxMicros);
    }

    /** A fresh auto-resizing histogram with the precision the recorders use. */
    static Histogram newHistogram() {
        return new Histogram(3);
    }
}
