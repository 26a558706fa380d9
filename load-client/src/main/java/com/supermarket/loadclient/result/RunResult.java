package com.supermarket.loadclient.result;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Everything a run measured; written as JSON by {@code run --out} and read by {@code report}.
 * Immutable once built (the collections are copied). Fields are only ever added, never renamed:
 * scripts and older readers pick fields out of the JSON by name.
 *
 * @param label              free text naming the setup (e.g. an instance size)
 * @param baseUrl            the server the run targeted
 * @param mode               {@code closed} (next request when the previous one answered) or
 *                           {@code open} (paced, latency from the intended send time)
 * @param parameters         the load profile
 * @param startedAt          wall-clock start
 * @param wallTimeSeconds    from the first request to the last answer
 * @param successful         requests answered 2xx (at the first attempt or a retry)
 * @param failed             requests that failed for good: answered 4xx/5xx, failed to connect or
 *                           timed out at their last attempt (the final failures)
 * @param throughput         all completed requests per second of wall time (the original
 *                           study's figure)
 * @param successThroughput  successful requests per second of wall time
 * @param failuresByStatus   failed attempts by HTTP status code (first tries and retries)
 * @param failuresByError    failed attempts by error kind (exception class), no status
 * @param latency            per request type (types never sent are absent)
 * @param phases             when each time-zone phase started
 * @param timeline           per-second samples, for the over-time chart
 * @param csvWriterBusySeconds time the CSV writer thread spent formatting and writing (0 without
 *                           {@code --csv}); off the store threads, but it shares the CPU
 * @param firstTryFailures   requests whose first attempt failed (retried or not)
 * @param retries            attempts sent again after a failure
 * @param clientCpuSeconds   CPU time of the load client's process from the first request to
 *                           the last answer (all its threads, user + system)
 * @param processCpuSeconds  CPU time (user + system) of other processes over the same interval,
 *                           by name, as asked with {@code --watch-pid}; empty if none were asked
 * @param fullLoad           throughput and latency while every store sends
 * @param purchases          the purchases by outcome (accepted, maybe accepted, refused), per
 *                           {@code Idempotency-Key}; null in result files written before it was
 *                           recorded
 * @param interrupted        the run was stopped by SIGINT or SIGTERM before its end: its figures
 *                           cover the time until then
 * @param unansweredAtStop   requests still unanswered a grace period after the stop, abandoned and
 *                           counted nowhere else (0 unless interrupted)
 * @param pacing             the paced mode's late starts ({@link Pacing#none()} for a closed loop)
 * @param histogramLog       the run's HdrHistogram interval log, relative to this result's folder
 *                           (or as given, without a result file), or null when none was written
 * @param thresholds         the {@code --threshold}s checked at the end, in the order given
 * @param environment        machine, JVM, commit and settings of the run; null in result files
 *                           written before it was recorded
 */
public record RunResult(String label, String baseUrl, String mode, RunParameters parameters, Instant startedAt,
        double wallTimeSeconds, long successful, long failed, double throughput, double successThroughput,
        Map<String, Long> failuresByStatus, Map<String, Long> failuresByError,
        Map<RequestType, LatencySummary> latency, List<PhaseStart> phases, List<TimelinePoint> timeline,
        double csvWriterBusySeconds, long firstTryFailures, long retries, double clientCpuSeconds,
        Map<String, Double> processCpuSeconds, FullLoad fullLoad, PurchaseOutcomes purchases, boolean interrupted,
        long unansweredAtStop, Pacing pacing, String histogramLog, List<ThresholdResult> thresholds,
        RunEnvironment environment) {

    public RunResult {
        failuresByStatus = Map.copyOf(failuresByStatus);
        failuresByError = Map.copyOf(failuresByError);
        latency = Map.copyOf(latency);
        phases = List.copyOf(phases);
        timeline = List.copyOf(timeline);
        // Result files written before these were measured have none.
        processCpuSeconds = processCpuSeconds == null ? Map.of() : Map.copyOf(processCpuSeconds);
        fullLoad = fullLoad == null ? FullLoad.none() : fullLoad;
        pacing = pacing == null ? Pacing.none() : pacing;
        thresholds = thresholds == null ? List.of() : List.copyOf(thresholds);
    }

    /** POST latency, or an empty summary if no POST succeeded. */
    public LatencySummary postLatency() {
        return latency.getOrDefault(RequestType.POST, LatencySummary.empty());
    }

    /** The latency of {@code type}, or an empty summary if none succeeded. */
    public LatencySummary latencyOf(RequestType type) {
        return latency.getOrDefault(type, LatencySummary.empty());
    }

    /** Requests that ended, successful or failed for good. */
    public long requests() {
        return successful + failed;
    }

    /** This result with what is known only once the run is over: its thresholds checked, its environment, its files. */
    public RunResult withVerdict(List<ThresholdResult> checked, RunEnvironment runEnvironment, String histogramLogFile) {
        return new RunResult(label, baseUrl, mode, parameters, startedAt, wallTimeSeconds, successful, failed,
                throughput, successThroughput, failuresByStatus, failuresByError, latency, phases, timeline,
                csvWriterBusySeconds, firstTryFailures, retries, clientCpuSeconds, processCpuSeconds, fullLoad,
                purchases, interrupted, unansweredAtStop, pacing, histogramLogFile, checked, runEnvironment);
    }
}
