package com.supermarket.api.auth;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * One log line per refused request, at most {@code perSecond} lines a second: a flood of bad
 * keys (a misconfigured till fleet, a scan) must not flood the logs. The lines that were
 * dropped are counted and reported on the next line written. The caller composes the line and
 * must never put the key in it.
 * <p>
 * Thread-safety: lock-free; the limit is exact per one-second window up to races between
 * concurrent window changes (a few lines more at a window boundary at worst).
 */
final class RefusalLog {

    private final Logger log;
    private final int perSecond;
    private final LongSupplier nanoClock;
    private final AtomicLong windowStart;
    private final AtomicLong inWindow = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();

    RefusalLog(Logger log, int perSecond, LongSupplier nanoClock) {
        if (perSecond < 1) {
            throw new IllegalArgumentException("at least one refusal line per second");
        }
        this.log = log;
        this.perSecond = perSecond;
        this.nanoClock = nanoClock;
        this.windowStart = new AtomicLong(nanoClock.getAsLong());
    }

    /** Logs {@code message} (a format with one {@code {}}-free text) unless this second's lines are used up. */
    void refused(String message) {
        long now = nanoClock.getAsLong();
        long start = windowStart.get();
        if (now - start >= 1_000_000_000L && windowStart.compareAndSet(start, now)) {
            inWindow.set(0);
        }
        if (inWindow.incrementAndGet() > perSecond) {
            dropped.incrementAndGet();
            return;
        }
        long before = dropped.getAndSet(0);
        if (before > 0) {
            log.warn("{} (and {} refusals not logged before this one)", message, before);
        } else {
            log.warn("{}", message);
        }
    }
}
