package com.supermarket.loadclient.result;

/**
 * The load profile a run used. Immutable.
 *
 * @param maxStores         stores 1..maxStores, one thread each
 * @param customersPerStore customer ids per store
 * @param maxItemId         item ids 1..maxItemId
 * @param purchasesPerHour  POSTs each store sends per simulated hour (9 hours per store)
 * @param itemsPerPurchase  items per purchase body
 * @param date              {@code yyyyMMdd} path value
 * @param getRatio          GET queries sent per POST (0 = POSTs only)
 * @param rate              open-model target requests/s with every store open; 0 = closed loop
 * @param timeoutSeconds    per-request timeout
 * @param retries           extra attempts of a failed request (0 = never retry)
 */
public record RunParameters(int maxStores, int customersPerStore, int maxItemId, int purchasesPerHour,
        int itemsPerPurchase, String date, double getRatio, double rate, double timeoutSeconds, int retries) {
}
