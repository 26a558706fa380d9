package com.supermarket.loadclient.run;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.supermarket.loadclient.result.FullLoad;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.ThresholdResult;

/** Formats a run's result for people. Stateless. */
final class Summary {

    private Summary() {
    }

    static String format(RunResult result) {
        StringBuilder text = new StringBuilder();
        var p = result.parameters();
        text.append(String.format(Locale.ROOT, "Run '%s': %d stores, %s, %s%s%s, %s%n",
                result.label(), p.maxStores(),
                p.timed() ? String.format(Locale.ROOT, "for %s", seconds(p.durationSeconds()))
                        : p.purchasesPerHour() + " purchases/hour/store",
                result.mode().equals("open") ? "open model at " : "closed loop",
                result.mode().equals("open") ? String.format(Locale.ROOT, "%,.0f req/s", p.rate()) : "",
                p.maxInFlightPerStore() > 1 ? ", up to " + p.maxInFlightPerStore() + " in flight per store" : "",
                result.baseUrl()));
        if (result.interrupted()) {
            text.append(String.format(Locale.ROOT, "  INTERRUPTED  after %,.1f s; %,d requests in flight went unanswered within the %d s grace%n",
                    result.wallTimeSeconds(), result.unansweredAtStop(), LoadRun.STOP_GRACE.toSeconds()));
        }
        text.append(String.format(Locale.ROOT, "  successful   %,d%n", result.successful()));
        text.append(String.format(Locale.ROOT, "  failed       %,d for good (first tries failed %,d, retries %,d, retries allowed %d)%n",
                result.failed(), result.firstTryFailures(), result.retries(), p.retries()));
        PurchaseOutcomes purchases = result.purchases();
        if (purchases != null) {
            text.append(String.format(Locale.ROOT, "  purchases    %,d accepted, %,d maybe accepted, %,d refused (per Idempotency-Key)%n",
                    purchases.accepted(), purchases.maybeAccepted(), purchases.refused()));
            PurchaseOutcomes.LateRetries late = purchases.lateRetries();
            if (late.stores() > 0) {
                text.append(String.format(Locale.ROOT, "  late retries %,d of %,d stores re-sent an accepted purchase: %,d answered 2xx, %,d failed%n",
                        late.sent(), late.stores(), late.answered(), late.failed()));
            }
        }
        if (result.firstTryFailures() > 0) {
            text.append(String.format(Locale.ROOT, "  failed tries %s%n", failureDetail(result)));
        }
        text.append(String.format(Locale.ROOT, "  wall time    %,.1f s%n", result.wallTimeSeconds()));
        text.append(String.format(Locale.ROOT, "  throughput   %,.1f req/s (successful: %,.1f req/s)%n",
                result.throughput(), result.successThroughput()));
        long requests = result.successful() + result.failed();
        text.append(String.format(Locale.ROOT, "  client CPU   %,.1f s, %.1f µs per request%n", result.clientCpuSeconds(),
                requests == 0 ? 0 : result.clientCpuSeconds() * 1e6 / requests));
        result.processCpuSeconds().forEach((name, seconds) -> text.append(String.format(Locale.ROOT,
                "  CPU %-12s %,.1f s, %.3f ms per successful request%n", name, seconds,
                result.successful() == 0 ? 0 : seconds * 1000 / result.successful())));
        if (result.mode().equals("open")) {
            var pacing = result.pacing();
            text.append(String.format(Locale.ROOT, "  late starts  %,d of %,d paced sends (%.2f%%: no free connection at their time; mean %.2f ms, max %.2f ms late; none dropped)%n",
                    pacing.lateStarts(), pacing.intendedSends(),
                    pacing.intendedSends() == 0 ? 0 : 100.0 * pacing.lateStarts() / pacing.intendedSends(),
                    pacing.meanLateMs(), pacing.maxLateMs()));
        }
        text.append(String.format(Locale.ROOT, "  latency ms   %10s %9s %9s %9s %9s %9s %9s %9s %9s%n",
                "count", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"));
        appendLatency(text, result.latency());
        FullLoad full = result.fullLoad();
        if (full.seconds() > 0) {
            text.append(String.format(Locale.ROOT, "  while all %d stores sent (%.1f s, %,.1f req/s):%n",
                    p.maxStores(), full.seconds(), full.requestsPerSecond()));
            appendLatency(text, full.latency());
            if (full.clientLoopLag().count() > 0) {
                appendLine(text, "loop lag", full.clientLoopLag(), "  (the client's own share)");
            }
        }
        result.phases().forEach(phase -> text.append(String.format(Locale.ROOT, "  phase %-7s stores %d..%d %s%n",
                phase.name(), phase.firstStore(), phase.lastStore(),
                phase.atSeconds() < 0 ? "did not start" : String.format(Locale.ROOT, "started at %.1f s", phase.atSeconds()))));
        appendThresholds(text, result.thresholds());
        return text.toString();
    }

    private static void appendThresholds(StringBuilder text, List<ThresholdResult> thresholds) {
        if (thresholds.isEmpty()) {
            return;
        }
        long passed = thresholds.stream().filter(ThresholdResult::passed).count();
        text.append(String.format(Locale.ROOT, "  thresholds   %d of %d held%n", passed, thresholds.size()));
        for (ThresholdResult threshold : thresholds) {
            text.append(String.format(Locale.ROOT, "    %-4s %-28s measured %s%n", threshold.passed() ? "pass" : "FAIL",
                    threshold.threshold(), measured(threshold)));
        }
    }

    private static String measured(ThresholdResult threshold) {
        if (threshold.measured() == null) {
            return "nothing (no successful request of that type)";
        }
        return switch (threshold.unit()) {
            case "ms" -> String.format(Locale.ROOT, "%.3f ms", threshold.measured());
            case "%" -> String.format(Locale.ROOT, "%.4f%%", threshold.measured());
            case "requests" -> String.format(Locale.ROOT, "%,.0f failed", threshold.measured());
            default -> String.format(Locale.ROOT, "%,.1f req/s", threshold.measured());
        };
    }

    private static String seconds(double seconds) {
        return seconds == Math.rint(seconds) ? String.format(Locale.ROOT, "%,.0f s", seconds)
                : String.format(Locale.ROOT, "%,.3f s", seconds);
    }

    private static void appendLatency(StringBuilder text, Map<RequestType, LatencySummary> latency) {
        for (RequestType type : RequestType.values()) {
            LatencySummary l = latency.get(type);
            if (l != null) {
                appendLine(text, type.csvName(), l, "");
            }
        }
    }

    private static void appendLine(StringBuilder text, String name, LatencySummary l, String note) {
        text.append(String.format(Locale.ROOT, "  %-12s %,10d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f%s%n",
                name, l.count(), l.meanMs(), l.medianMs(), l.p90Ms(), l.p95Ms(), l.p99Ms(), l.p999Ms(), l.p9999Ms(),
                l.maxMs(), note));
    }

    private static String failureDetail(RunResult result) {
        return "by status " + describe(result.failuresByStatus()) + ", by error " + describe(result.failuresByError());
    }

    private static String describe(Map<String, Long> counts) {
        return counts.isEmpty() ? "{}" : counts.toString();
    }
}
