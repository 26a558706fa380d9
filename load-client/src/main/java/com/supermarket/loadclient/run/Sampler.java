package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;

import com.supermarket.loadclient.result.FullLoad;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.TimelinePoint;

/**
 * Once per interval, drains every event loop's recorders into per-type totals, appends a
 * {@link TimelinePoint} and redraws the progress bar. An interval that every store sent through
 * (all phases open at its start, none finished at its end) also goes into the {@link FullLoad}
 * totals, with the loops' lag ({@link LoopLag}) of that interval.
 * <p>
 * Thread-safety: {@link #sample()} is synchronized; it is called by the run's scheduler thread
 * and, once the stores are done, one last time by the coordinating thread. The event loops
 * never touch this class (they only write their own recorders and the lock-free counters).
 */
final class Sampler {


    private static final int BAR_WIDTH = 30;
    private static final int LINE_EVERY_SAMPLES = 10;

    private final LoopMetrics[] loops;
    private final int maxStores;
    private final FailureTally failures;
    private final LongAdder completed;
    private final long expectedRequests;
    private final List<PhaseGate> gates;
    private final long startNanos;
    private final ProgressMode progress;
    private final PrintStream err;
    private final CountDownLatch unfinishedStores;
    private final Map<RequestType, Histogram> totals = new EnumMap<>(RequestType.class);
    private final Map<RequestType, Histogram> atFullLoad = new EnumMap<>(RequestType.class);
    private final Map<RequestType, Histogram> lastInterval = new EnumMap<>(RequestType.class);
    private final Histogram lagAtFullLoad = LatencyStats.newHistogram();
    private final Histogram lagOfInterval = LatencyStats.newHistogram();
    private final HistogramLog histogramLog;
    private final List<RequestType> sentTypes;
    private final long durationNanos;
    private final List<TimelinePoint> timeline = new ArrayList<>();
    private final RunContext run;
    private final long pauseRetriesAfterNanos;
    private long lastNanos;
    private long lastSuccessNanos;
    private long lastCompleted;
    private long lastFailed;
    private int samples;
    private boolean fullAtLastSample;
    private long fullLoadNanos;
    private long fullLoadSuccesses;

    /**
     * @param expectedRequests the requests of a run of a set count, for the progress; 0 for a timed run
     * @param durationNanos    a timed run's length, for the progress; 0 for a run of a set count
     * @param unfinishedStores counted down by each store as it finishes
     * @param histogramLog     where each interval's histograms go, {@link HistogramLog#NONE} for nowhere
     * @param sentTypes        the request types the run sends: the ones logged each interval
     */
    Sampler(LoopMetrics[] loops, int maxStores, FailureTally failures, LongAdder completed, long expectedRequests,
            long durationNanos, List<PhaseGate> gates, CountDownLatch unfinishedStores, long startNanos,
            ProgressMode progress, PrintStream err, RunContext run, Duration pauseRetriesAfter,
            HistogramLog histogramLog, List<RequestType> sentTypes) {
        this.histogramLog = histogramLog;
        this.sentTypes = List.copyOf(sentTypes);
        this.durationNanos = durationNanos;
        this.run = run;
        this.pauseRetriesAfterNanos = pauseRetriesAfter.toNanos();
        this.lastSuccessNanos = startNanos;
        this.loops = loops;
        this.maxStores = maxStores;
        this.failures = failures;
        this.completed = completed;
        this.expectedRequests = expectedRequests;
        this.gates = gates;
        this.unfinishedStores = unfinishedStores;
        this.startNanos = startNanos;
        this.progress = progress;
        this.err = err;
        this.lastNanos = startNanos;
        for (RequestType type : RequestType.values()) {
            totals.put(type, LatencyStats.newHistogram());
            atFullLoad.put(type, LatencyStats.newHistogram());
            lastInterval.put(type, LatencyStats.newHistogram());
        }
    }

    synchronized void sample() {
        long now = System.nanoTime();
        double seconds = Math.max(1e-9, (now - lastNanos) / 1e9);
        double fromSeconds = (lastNanos - startNanos) / 1e9;
        double toSeconds = (now - startNanos) / 1e9;
        long successes = 0;
        int active = activeStores();
        boolean fullNow = active == maxStores && unfinishedStores.getCount() == maxStores;
        boolean fullInterval = fullAtLastSample && fullNow;
        for (RequestType type : RequestType.values()) {
            Histogram interval = lastInterval.get(type);
            interval.reset();
            for (LoopMetrics loop : loops) {
                Histogram ofLoop = loop.intervalHistogram(type);
                if (ofLoop.getTotalCount() > 0) {
                    interval.add(ofLoop);
                }
            }
            if (interval.getTotalCount() > 0) {
                totals.get(type).add(interval);
                if (fullInterval) {
                    atFullLoad.get(type).add(interval);
                }
                successes += interval.getTotalCount();
            }
            if (sentTypes.contains(type)) {
                histogramLog.interval(type.csvName(), fromSeconds, toSeconds, interval);
            }
        }
        lagOfInterval.reset();
        for (LoopMetrics loop : loops) {
            lagOfInterval.add(loop.intervalLag()); // drained every interval, kept only in the window
        }
        if (fullInterval) {
            lagAtFullLoad.add(lagOfInterval);
        }
        histogramLog.interval(HistogramLog.LOOP_LAG, fromSeconds, toSeconds, lagOfInterval);
        Histogram posts = lastInterval.get(RequestType.POST);
        long failedNow = failures.failedAttempts();
        long completedNow = completed.sum();
        timeline.add(new TimelinePoint(toSeconds, successes / seconds,
                (failedNow - lastFailed) / seconds,
                posts.getTotalCount() == 0 ? 0 : posts.getValueAtPercentile(50.0) / 1000.0,
                posts.getTotalCount() == 0 ? 0 : posts.getValueAtPercentile(99.0) / 1000.0,
                posts.getMaxValue() / 1000.0, active));
        if (fullInterval) {
            fullLoadNanos += now - lastNanos;
            fullLoadSuccesses += successes;
        }
        fullAtLastSample = fullNow;
        if (successes > 0) {
            lastSuccessNanos = now;
        }
        run.retrying(now - lastSuccessNanos < pauseRetriesAfterNanos);
        printProgress(now, completedNow, (completedNow - lastCompleted) / seconds, failedNow);
        lastNanos = now;
        lastCompleted = completedNow;
        lastFailed = failedNow;
        samples++;
    }

    /** Ends the bar's line so the summary starts on a fresh one. */
    synchronized void finish() {
        if (progress == ProgressMode.BAR) {
            err.println();
        }
    }

    synchronized Histogram total(RequestType type) {
        return totals.get(type).copy();
    }

    synchronized FullLoad fullLoad() {
        if (fullLoadNanos == 0) {
            return FullLoad.none();
        }
        Map<RequestType, LatencySummary> latency = new EnumMap<>(RequestType.class);
        atFullLoad.forEach((type, micros) -> {
            if (micros.getTotalCount() > 0) {
                latency.put(type, LatencyStats.summarize(micros));
            }
        });
        double seconds = fullLoadNanos / 1e9;
        return new FullLoad(seconds, fullLoadSuccesses / seconds, latency, LatencyStats.summarize(lagAtFullLoad));
    }

    synchronized List<TimelinePoint> timeline() {
        return List.copyOf(timeline);
    }

    private int activeStores() {
        int active = 0;
        for (PhaseGate gate : gates) {
            if (gate.isOpen()) {
                active += gate.phase().size();
            }
        }
        return active;
    }

    private static String clock(long seconds) {
        return String.format(Locale.ROOT, "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
    }

    private void printProgress(long now, long done, double rate, long failed) {
        if (progress == ProgressMode.OFF || progress == ProgressMode.AUTO) {
            return;
        }
        double fraction = durationNanos > 0 ? Math.min(1.0, (now - startNanos) / (double) durationNanos)
                : expectedRequests == 0 ? 1 : Math.min(1.0, done / (double) expectedRequests);
        long elapsed = (now - startNanos) / 1_000_000_000L;
        String requests = durationNanos > 0 ? String.format(Locale.ROOT, "%,d req", done)
                : String.format(Locale.ROOT, "%,d/%,d req", done, expectedRequests);
        String status = String.format(Locale.ROOT, "%5.1f%% %s  %,.0f req/s  failed attempts %,d  stores %d/%d  %s%s",
                fraction * 100, requests, rate, failed, activeStores(), maxStores, clock(elapsed),
                durationNanos > 0 ? " of " + clock(durationNanos / 1_000_000_000L) : "");
        if (progress == ProgressMode.BAR) {
            int filled = (int) Math.round(fraction * BAR_WIDTH);
            err.print("\r[" + "#".repeat(filled) + " ".repeat(BAR_WIDTH - filled) + "] " + status + "  ");
            err.flush();
        } else if (samples % LINE_EVERY_SAMPLES == 0) {
            err.println("[load-client] " + status);
        }
    }
}
