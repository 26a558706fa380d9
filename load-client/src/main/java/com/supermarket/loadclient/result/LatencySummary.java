package com.supermarket.loadclient.result;

/**
 * Latency of the successful requests of one type, in milliseconds. Percentiles are nearest-rank
 * values taken from an HdrHistogram with 3 significant digits recorded in microseconds (so each
 * is the upper edge of a bucket at most 0.1% wide); {@code meanMs} and {@code maxMs} are exact.
 * Immutable. Result files written before p90, p95 and p99.99 were recorded read them as 0.
 *
 * @param count    successful requests of this type
 * @param meanMs   exact arithmetic mean
 * @param medianMs 50th percentile
 * @param p90Ms    90th percentile
 * @param p95Ms    95th percentile
 * @param p99Ms    99th percentile
 * @param p999Ms   99.9th percentile
 * @param p9999Ms  99.99th percentile
 * @param maxMs    exact maximum
 */
public record LatencySummary(long count, double meanMs, double medianMs, double p90Ms, double p95Ms, double p99Ms,
        double p999Ms, double p9999Ms, double maxMs) {

    /** A summary of no requests. */
    public static LatencySummary empty() {
        return new LatencySummary(0, 0, 0, 0, 0, 0, 0, 0, 0);
    }
}
