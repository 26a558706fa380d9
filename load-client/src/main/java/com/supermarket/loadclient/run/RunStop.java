package com.supermarket.loadclient.run;

import java.util.ArrayList;
import java.util.List;

/**
 * A request to end a run early (SIGINT, SIGTERM), and why. Thread-safe: requested from a signal
 * handler's thread, read by the run's threads; the first request wins and runs the actions
 * registered with {@link #whenRequested} on the requesting thread.
 */
final class RunStop {

    private final List<Runnable> actions = new ArrayList<>();
    private volatile String reason;

    /** Asks the run to stop; returns false if it had been asked already. */
    boolean request(String why) {
        List<Runnable> toRun;
        synchronized (this) {
            if (reason != null) {
                return false;
            }
            reason = why;
            toRun = List.copyOf(actions);
        }
        toRun.forEach(Runnable::run);
        return true;
    }

    /** Runs {@code action} when the stop is requested, at once if it has been. */
    void whenRequested(Runnable action) {
        synchronized (this) {
            if (reason == null) {
                actions.add(action);
                return;
            }
        }
        action.run();
    }

    boolean requested() {
        return reason != null;
    }

    /** Why the run was stopped, e.g. {@code SIGTERM}, or null. */
    String reason() {
        return reason;
    }
}
