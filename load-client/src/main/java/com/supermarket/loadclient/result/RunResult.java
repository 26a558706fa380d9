package com.supermarket.loadclient.result;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Everything a run measured; written as JSON by {@code run --out} and read by {@code report}.
 * Immutable once built (the collections are copied).
 *
 * @param label              free text naming the setup (e.g. an instance size)
 * @param baseUrl            the server the run targeted
 * @param mode               {@code closed} (next request when the previous one answered) or
 *                           {@code open} (paced, latency from the intended send time)
 * @param parameters         the load profile
 * @param startedAt          wall-clock start
 * @param wallTimeSeconds    from the first request to the last answer
 * @param successful         requests answered 2xx
 * @param failed             requests answered 4xx/5xx, or that failed to connect or timed out
 * @param throughput         all completed requests per second of wall time (the original
 *                           study's figure)
 * @param successThroughput  successful requests per second of wall time
 * @param failuresByStatus   failed requests by HTTP status code
 * @param failuresByError    failed requests by error kind (exception class), no status
 * @param latency            per request type (types never sent are absent)
 * @param phases             when each time-zone phase started
 * @param timeline           per-second samples, for the over-time chart
 * @param csvWriterBusySeconds time the CSV writer thread spent formatting and writing (0 without
 *                           {@code --csv}); off the store threads, but it shares the CPU
 */
public record RunResult(String label, String baseUrl, String mode, RunParameters parameters, Instant startedAt,
        double wallTimeSeconds, long successful, long failed, double throughput, double successThroughput,
        Map<String, Long> failuresByStatus, Map<String, Long> failuresByError,
        Map<RequestType, LatencySummary> latency, List<PhaseStart> phases, List<TimelinePoint> timeline,
        double csvWriterBusySeconds) {

    public RunResult {
        failuresByStatus = Map.copyOf(failuresByStatus);
        failuresByError = Map.copyOf(failuresByError);
        latency = Map.copyOf(latency);
        phases = List.copyOf(phases);
        timeline = List.copyOf(timeline);
    }

    /** POST latency, or an empty summary if no POST succeeded. */
    public LatencySummary postLatency() {
        return latency.getOrDefault(RequestType.POST, LatencySummary.empty());
    }
}
