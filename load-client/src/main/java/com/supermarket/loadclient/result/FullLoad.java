package com.supermarket.loadclient.result;

import java.util.Map;

/**
 * The run while every store sends: from the first sample after the last time-zone phase opened
 * to the last sample before the first store finished. Over the whole run the phases' ramp and
 * tail, at a fraction of the load, dilute the figures; this window is the load the run is named
 * for (a paced run's full rate, a closed loop's peak). Whole sample intervals only, so the
 * window starts up to one interval late and a request slower than an interval that began before
 * it may count in it. Immutable.
 *
 * @param seconds           the window's length; 0 if no whole interval had every store sending
 * @param requestsPerSecond successful requests per second within it
 * @param latency           per request type, of the requests answered within it; the mean and
 *                          max come from the histogram (3 significant digits), not exact sums
 * @param clientLoopLag     how late the client's event loops ran within it (a 5 ms probe on each
 *                          loop): the part of every latency above that the client itself adds
 *                          while it shares the cores; empty in result files written before it
 *                          was measured
 */
public record FullLoad(double seconds, double requestsPerSecond, Map<RequestType, LatencySummary> latency,
        LatencySummary clientLoopLag) {

    public FullLoad {
        latency = Map.copyOf(latency);
        clientLoopLag = clientLoopLag == null ? LatencySummary.empty() : clientLoopLag;
    }

    /** No window: a run too short for one, or a result file written before it was measured. */
    public static FullLoad none() {
        return new FullLoad(0, 0, Map.of(), LatencySummary.empty());
    }
}
