package com.supermarket.loadclient.result;

/**
 * One sample of a run's timeline (normally one per second). Immutable.
 *
 * @param atSeconds         end of the sampled interval, seconds since the run started
 * @param requestsPerSecond successful requests per second (all types) in the interval
 * @param errorsPerSecond   failed attempts per second in the interval (with retries, a failed
 *                          attempt may still end in a success)
 * @param postP50Ms         median POST latency in the interval (0 when none completed)
 * @param postP99Ms         99th percentile POST latency in the interval
 * @param postMaxMs         highest POST latency in the interval
 * @param activeStores      stores whose phase had started by the end of the interval
 */
public record TimelinePoint(double atSeconds, double requestsPerSecond, double errorsPerSecond,
        double postP50Ms, double postP99Ms, double postMaxMs, int activeStores) {
}
