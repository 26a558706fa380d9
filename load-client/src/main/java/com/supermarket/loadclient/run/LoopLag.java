package com.supermarket.loadclient.run;

import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;

/**
 * How late an event loop runs: every {@link #PERIOD_NANOS 5 ms} the loop runs this probe, which
 * records how far past its due time it started. A loop busy with other stores' answers, or
 * waiting for a core, starts it late, and an answer arriving meanwhile waits about as long before
 * it is timed: the lag is the client's own share of the latencies it reports (the measurement
 * jHiccup makes, on the client's own threads). Each run schedules the next one a period after it
 * started, so a stall is measured once rather than owed; the probes a stall swallowed are filled
 * in as HdrHistogram's expected-interval correction does (a 20 ms stall: 20, 15, 10 and 5 ms), as
 * the answers arriving during it would have waited.
 * <p>
 * Thread-safety: run only by its loop (one instance per loop), which is also the only writer of
 * that loop's {@link LoopMetrics}.
 */
final class LoopLag implements Runnable {

    /**
     * The probe's period: short beside the latencies it explains, and 200 wake-ups a second per
     * loop (every 1 ms cost a paced run at 2,000 requests/s a tenth more client CPU per request).
     */
    static final long PERIOD_NANOS = 5_000_000L;

    /** Where the next probe is scheduled: the loop's own scheduler. */
    @FunctionalInterface
    interface Scheduler {
        void after(long nanos, Runnable task);
    }

    private final LoopMetrics metrics;
    private final LongSupplier clock;
    private final Scheduler scheduler;
    private long due;

    LoopLag(LoopMetrics metrics, LongSupplier clock, Scheduler scheduler) {
        this.metrics = metrics;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    /** Schedules the first probe. */
    void start() {
        scheduleNext(clock.getAsLong());
    }

    @Override
    public void run() {
        long now = clock.getAsLong();
        metrics.recordLag(Math.max(0, now - due) / 1000, PERIOD_NANOS / 1000);
        scheduleNext(now);
    }

    private void scheduleNext(long now) {
        due = now + PERIOD_NANOS;
        try {
            scheduler.after(PERIOD_NANOS, this);
        } catch (RejectedExecutionException e) {
            // The loop is shutting down with the run: nothing left to measure.
        }
    }
}
