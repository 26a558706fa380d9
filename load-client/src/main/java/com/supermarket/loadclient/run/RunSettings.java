package com.supermarket.loadclient.run;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import com.supermarket.loadclient.result.RunParameters;

/**
 * What one run needs besides the load profile. Immutable.
 *
 * @param baseUrl        the purchase API, e.g. {@code http://localhost:8080}
 * @param label          names the setup in results and charts
 * @param parameters     the load profile
 * @param csv            file for one record per attempt, or null
 * @param histogramLog   file for the HdrHistogram interval log, or null
 * @param progress       progress display on stderr
 * @param sampleInterval timeline and progress period (one second normally)
 * @param seed           random seed for paths and bodies
 * @param ioThreads      event loops carrying the connections
 * @param watchedPids    other processes whose CPU time the run measures, by name
 * @param pauseRetriesAfter with no success for this long, retries pause until the next success
 * @param tillKeys       the keys to send ({@code --till-keys}), or null to send none
 * @param lateRetries    accepted purchases to re-send late ({@code --late-retries}); {@link LateRetryPlan#NONE} for none
 * @param allStoresAtOnce every phase opens at the start ({@code --all-stores-at-once}): a steady load
 */
record RunSettings(URI baseUrl, String label, RunParameters parameters, Path csv, Path histogramLog, ProgressMode progress,
        Duration sampleInterval, long seed, int ioThreads, Map<String, Long> watchedPids, Duration pauseRetriesAfter,
        TillKeyFile tillKeys, LateRetryPlan lateRetries, boolean allStoresAtOnce) {

    /**
     * Longer than a full series of the default backoff (about 63 s), so only a server gone for
     * good stops the retries; such a server then ends the run in minutes instead of every store
     * waiting out its whole backoff on every purchase.
     */
    static final Duration PAUSE_RETRIES_AFTER = Duration.ofMinutes(2);

    /** Offsets of a store's GET cycle ({@link #getsAfter}): millionths of one cycle. */
    static final long GET_OFFSETS = 1_000_000L;

    /** At most this many stores in the client's own warm-up ({@link #warmUpAgainst}). */
    static final int WARM_UP_STORES = 64;

    /** Purchases per store-hour of the warm-up: at 64 stores 20,160 POSTs, plus the GETs of the ratio. */
    static final int WARM_UP_PER_HOUR = 35;

    RunSettings {
        watchedPids = Map.copyOf(watchedPids);
    }

    /**
     * The client's own warm-up: the same requests (items, dates, GET ratio, keys) from up to
     * {@link #WARM_UP_STORES} stores against {@code stub}, closed loop, a count rather than a
     * duration, recording nothing (no CSV, histogram log, progress or watched processes),
     * retrying nothing and re-sending nothing late.
     */
    RunSettings warmUpAgainst(URI stub) {
        RunParameters p = parameters;
        return new RunSettings(stub, label + " (client warm-up)",
                new RunParameters(Math.min(p.maxStores(), WARM_UP_STORES), p.customersPerStore(), p.maxItemId(),
                        WARM_UP_PER_HOUR, p.itemsPerPurchase(), p.date(), p.getRatio(), 0, p.timeoutSeconds(), 0, 0,
                        p.maxInFlightPerStore()),
                null, null, ProgressMode.OFF, sampleInterval, seed, ioThreads, Map.of(), pauseRetriesAfter, tillKeys,
                LateRetryPlan.NONE, allStoresAtOnce);
    }

    RetryPolicy retryPolicy() {
        return RetryPolicy.standard(parameters.retries());
    }

    boolean openModel() {
        return parameters.rate() > 0;
    }

    /** POSTs each store sends in a run of a set count: nine hours of purchases. */
    int postsPerStore() {
        return Phase.HOURS_OPEN * parameters.purchasesPerHour();
    }

    boolean timed() {
        return parameters.timed();
    }

    /**
     * A timed run's simulated hour: the phases' {@link Phase#HOURS_OPEN nine-hour} days, the last
     * opening {@link Phase#WEST_TRIGGER_HOURS five hours} after the first, end to end fill the
     * duration, so the east stores close at 9/14 of it, central at 12/14, west at the end.
     * With {@link #allStoresAtOnce} every store is open for the whole duration.
     */
    private long simulatedHourNanos() {
        double hours = allStoresAtOnce ? Phase.HOURS_OPEN : Phase.HOURS_OPEN + Phase.WEST_TRIGGER_HOURS;
        return Math.round(parameters.durationSeconds() * 1e9 / hours);
    }

    /** In a timed run, when {@code phase} opens, from the run's start. */
    long phaseOpensAfterNanos(Phase phase) {
        return allStoresAtOnce ? 0 : phase.triggerHours() * simulatedHourNanos();
    }

    /** In a timed run, when the stores of {@code phase} start no more requests, from the run's start. */
    long storesCloseAfterNanos(Phase phase) {
        return phaseOpensAfterNanos(phase) + Phase.HOURS_OPEN * simulatedHourNanos();
    }

    /**
     * GETs a store has sent once it has sent {@code posts} POSTs: one per 1/ratio POSTs, the
     * whole cycle moved forward by the store's {@code offset} (0 to {@link #GET_OFFSETS} - 1,
     * a fraction of one cycle), so that stores sending their POSTs in step do not also ask in
     * step. Integer arithmetic, capped at the store's total in a run of a set count, so the total
     * stays exact.
     */
    long getsAfter(long posts, long offset) {
        long due = (posts * getRatioMillionths() + offset) / GET_OFFSETS;
        return timed() ? due : Math.min(due, getsPerStore());
    }

    /** The requests of a run of a set count; 0 for a timed run. */
    long expectedRequests() {
        return timed() ? 0 : (long) parameters.maxStores() * (postsPerStore() + getsPerStore());
    }

    private long getsPerStore() {
        return postsPerStore() * getRatioMillionths() / GET_OFFSETS;
    }

    private long getRatioMillionths() {
        return Math.round(parameters.getRatio() * GET_OFFSETS);
    }
}
