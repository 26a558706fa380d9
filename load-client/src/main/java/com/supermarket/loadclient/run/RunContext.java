package com.supermarket.loadclient.run;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What every store of a run shares besides its counters: the run's id (the prefix of its
 * idempotency keys, new for every run so that two runs with the same {@code --seed} never share
 * a key), the mapping of {@code nanoTime} to wall-clock time, whether any request has
 * succeeded yet, and whether retrying is still worth it.
 * <p>
 * Thread-safety: immutable except two volatile flags: the success flag is only ever set (by the
 * stores), the retry flag is written by the sampler alone.
 */
final class RunContext {

    private final String id;
    private final long startNanos;
    private final long startEpochMillis;
    private volatile boolean anySucceeded;
    private volatile boolean retrying = true;

    RunContext(long startNanos, long startEpochMillis) {
        this.id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        this.startNanos = startNanos;
        this.startEpochMillis = startEpochMillis;
    }

    String id() {
        return id;
    }

    /** The run's start on the {@code nanoTime} clock. */
    long startNanos() {
        return startNanos;
    }

    long epochMillis(long nanos) {
        return startEpochMillis + (nanos - startNanos) / 1_000_000L;
    }

    void succeeded() {
        // Read first: after the first success this is a plain read of a shared, unchanging line.
        if (!anySucceeded) {
            anySucceeded = true;
        }
    }

    boolean anySucceeded() {
        return anySucceeded;
    }

    /** False while no request has succeeded for {@link RunSettings#pauseRetriesAfter()}: the server is gone. */
    boolean retrying() {
        return retrying;
    }

    void retrying(boolean worthIt) {
        if (retrying != worthIt) {
            retrying = worthIt;
        }
    }
}
