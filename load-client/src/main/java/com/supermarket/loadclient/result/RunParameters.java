package com.supermarket.loadclient.result;

/**
 * The load profile a run used. Immutable.
 *
 * @param maxStores           stores 1..maxStores
 * @param customersPerStore   customer ids per store
 * @param maxItemId           item ids 1..maxItemId
 * @param purchasesPerHour    POSTs each store sends per simulated hour (9 hours per store); unused
 *                            by a run of a set duration
 * @param itemsPerPurchase    items per purchase body
 * @param date                {@code yyyyMMdd} path value
 * @param getRatio            GET queries sent per POST (0 = POSTs only)
 * @param rate                open-model target requests/s with every store open; 0 = closed loop
 * @param timeoutSeconds      per-request timeout
 * @param retries             extra attempts of a failed request (0 = never retry)
 * @param durationSeconds     the run's length ({@code --duration}), the time zones scaled into it;
 *                            0 = as many requests as {@code purchasesPerHour} says (and in result
 *                            files written before runs had a duration)
 * @param maxInFlightPerStore requests a store has in flight at most, one connection each; 1 in
 *                            result files written before it could be more
 */
public record RunParameters(int maxStores, int customersPerStore, int maxItemId, int purchasesPerHour,
        int itemsPerPurchase, String date, double getRatio, double rate, double timeoutSeconds, int retries,
        double durationSeconds, int maxInFlightPerStore) {

    public RunParameters {
        maxInFlightPerStore = Math.max(1, maxInFlightPerStore);
    }

    /** Whether the run lasts a set time rather than a set number of purchases. */
    public boolean timed() {
        return durationSeconds > 0;
    }
}
