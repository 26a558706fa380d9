package com.supermarket.loadclient.run;

/**
 * A request to end a run early (SIGINT, SIGTERM), and why. Thread-safe: requested from a signal
 * handler's thread, read by the run's coordinating thread; the first request wins.
 */
final class RunStop {

    private volatile String reason;

    /** Asks the run to stop; returns false if it had been asked already. */
    synchronized boolean request(String why) {
        if (reason != null) {
            return false;
        }
        reason = why;
        return true;
    }

    boolean requested() {
        return reason != null;
    }

    /** Why the run was stopped, e.g. {@code SIGTERM}, or null. */
    String reason() {
        return reason;
    }
}
