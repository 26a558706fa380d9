package com.supermarket.loadclient.run;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Holds a phase's store threads until the phase starts. Thread-safe: any store thread may
 * {@link #open} it (the first call wins and fixes the start time), any number may wait.
 */
final class PhaseGate {

    private static final long NOT_OPENED = Long.MIN_VALUE;

    private final Phase phase;
    private final CountDownLatch latch = new CountDownLatch(1);
    private final AtomicLong openedAtNanos = new AtomicLong(NOT_OPENED);

    PhaseGate(Phase phase) {
        this.phase = phase;
    }

    Phase phase() {
        return phase;
    }

    void open() {
        if (openedAtNanos.compareAndSet(NOT_OPENED, System.nanoTime())) {
            latch.countDown();
        }
    }

    void awaitOpen() throws InterruptedException {
        latch.await();
    }

    boolean isOpen() {
        return openedAtNanos.get() != NOT_OPENED;
    }

    /** Seconds from {@code startNanos} to the opening, or -1 if the gate never opened. */
    double openedAfterSeconds(long startNanos) {
        long at = openedAtNanos.get();
        return at == NOT_OPENED ? -1 : Math.max(0, at - startNanos) / 1e9;
    }
}
