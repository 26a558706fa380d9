package com.supermarket.loadclient.run;

import java.util.ArrayList;
import java.util.List;

/**
 * Holds a phase's stores until the phase starts, then starts them. Thread-safe: any store may
 * {@link #open} it (the first call wins and fixes the start time); the stores of the phase
 * register with {@link #whenOpen} before the run starts.
 */
final class PhaseGate {

    private static final long NOT_OPENED = Long.MIN_VALUE;

    private final Phase phase;
    private final List<Runnable> waiting = new ArrayList<>();
    private long openedAtNanos = NOT_OPENED;
    private volatile boolean open;

    PhaseGate(Phase phase) {
        this.phase = phase;
    }

    Phase phase() {
        return phase;
    }

    /** Runs {@code action} when the gate opens (at once if it is open already). */
    void whenOpen(Runnable action) {
        synchronized (this) {
            if (!open) {
                waiting.add(action);
                return;
            }
        }
        action.run();
    }

    void open() {
        List<Runnable> starting;
        synchronized (this) {
            if (open) {
                return;
            }
            openedAtNanos = System.nanoTime();
            open = true;
            starting = List.copyOf(waiting);
            waiting.clear();
        }
        starting.forEach(Runnable::run);
    }

    boolean isOpen() {
        return open;
    }

    /** Seconds from {@code startNanos} to the opening, or -1 if the gate never opened. */
    synchronized double openedAfterSeconds(long startNanos) {
        return openedAtNanos == NOT_OPENED ? -1 : Math.max(0, openedAtNanos - startNanos) / 1e9;
    }
}
