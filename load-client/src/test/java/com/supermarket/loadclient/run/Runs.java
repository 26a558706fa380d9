package com.supermarket.loadclient.run;

import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;

/** Test helpers that run the load profile quietly. */
final class Runs {

    private Runs() {
    }

    static RunParameters standard(int stores, int purchasesPerHour) {
        return standard(stores, purchasesPerHour, 0);
    }

    static RunParameters standard(int stores, int purchasesPerHour, int retries) {
        return new RunParameters(stores, 1000, 100_000, purchasesPerHour, 5, "20210101", 0, 0, 10, retries, 0, 1);
    }

    static RunResult run(URI baseUrl, RunParameters parameters, Path csv) throws InterruptedException {
        return run(baseUrl, parameters, csv, RunSettings.PAUSE_RETRIES_AFTER);
    }

    static RunResult run(URI baseUrl, RunParameters parameters, Path csv, Duration pauseRetriesAfter)
            throws InterruptedException {
        return run(baseUrl, parameters, csv, pauseRetriesAfter, null);
    }

    static RunResult run(URI baseUrl, RunParameters parameters, Path csv, Duration pauseRetriesAfter, TillKeyFile tillKeys)
            throws InterruptedException {
        return run(baseUrl, parameters, csv, pauseRetriesAfter, tillKeys, LateRetryPlan.NONE);
    }

    static RunResult withLateRetries(URI baseUrl, RunParameters parameters, LateRetryPlan lateRetries) throws InterruptedException {
        return run(baseUrl, parameters, null, RunSettings.PAUSE_RETRIES_AFTER, null, lateRetries);
    }

    static RunResult allStoresAtOnce(URI baseUrl, RunParameters parameters) throws InterruptedException {
        return run(baseUrl, parameters, null, RunSettings.PAUSE_RETRIES_AFTER, null, LateRetryPlan.NONE, true);
    }

    static RunResult run(URI baseUrl, RunParameters parameters, Path csv, Duration pauseRetriesAfter, TillKeyFile tillKeys,
            LateRetryPlan lateRetries) throws InterruptedException {
        return run(baseUrl, parameters, csv, pauseRetriesAfter, tillKeys, lateRetries, false);
    }

    static RunResult run(URI baseUrl, RunParameters parameters, Path csv, Duration pauseRetriesAfter, TillKeyFile tillKeys,
            LateRetryPlan lateRetries, boolean allStoresAtOnce) throws InterruptedException {
        RunSettings settings = new RunSettings(baseUrl, "test", parameters, csv, null, ProgressMode.OFF,
                Duration.ofMillis(100), 42, 2, Map.of(), pauseRetriesAfter, tillKeys, lateRetries, allStoresAtOnce);
        return quietly(settings, new RunStop());
    }

    /**
     * A profile with the newer knobs: GETs, a pace, a duration, more than one request in flight.
     *
     * @param rate            0 = closed loop
     * @param durationSeconds 0 = nine hours of {@code purchasesPerHour}
     */
    static RunParameters profile(int stores, int purchasesPerHour, double getRatio, double rate, double durationSeconds,
            int maxInFlightPerStore) {
        return new RunParameters(stores, 1000, 100_000, purchasesPerHour, 5, "20210101", getRatio, rate, 10, 0,
                durationSeconds, maxInFlightPerStore);
    }

    /** Settings as the tests use them (two loops, 100 ms samples), with a histogram log or none. */
    static RunSettings settings(URI baseUrl, RunParameters parameters, Path histogramLog, boolean allStoresAtOnce) {
        return new RunSettings(baseUrl, "test", parameters, null, histogramLog, ProgressMode.OFF, Duration.ofMillis(100),
                42, 2, Map.of(), RunSettings.PAUSE_RETRIES_AFTER, null, LateRetryPlan.NONE, allStoresAtOnce);
    }

    /** Runs without output; {@code stop} may end the run early. */
    static RunResult quietly(RunSettings settings, RunStop stop) throws InterruptedException {
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        return new LoadRun(settings, quiet, stop).execute();
    }
}
