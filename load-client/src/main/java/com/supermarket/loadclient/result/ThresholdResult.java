package com.supermarket.loadclient.result;

/**
 * One {@code run --threshold} checked at the end of the run. Immutable.
 *
 * @param threshold the expression as given, e.g. {@code POST.p99<50ms}
 * @param metric    what was measured: {@code POST.p99}, {@code failed}, {@code rps}
 * @param operator  {@code <}, {@code <=}, {@code >} or {@code >=}
 * @param limit     the bound, in {@code unit}
 * @param unit      {@code ms} for latencies, {@code %} for a failed ratio, {@code requests} for a
 *                  failed count, {@code req/s} for throughput
 * @param measured  the run's value in {@code unit}; null when there was nothing to measure (no
 *                  successful request of that type), which fails the threshold
 * @param passed    whether {@code measured operator limit} held
 */
public record ThresholdResult(String threshold, String metric, String operator, double limit, String unit,
        Double measured, boolean passed) {
}
