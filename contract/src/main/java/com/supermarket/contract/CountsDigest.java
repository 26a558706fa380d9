package com.supermarket.contract;

/**
 * The fingerprint a store-service copy reports in {@code GET /state/summary}: an order-independent
 * digest of every non-zero (store, item, count) triple (the wrapping sum of a 64-bit mix of each),
 * equal for two sets of counts exactly when they are equal, but for a 2^-64 chance. store-service
 * computes it over its counts, the load client over the purchases database, and the two must
 * agree. Not thread-safe: one instance per computation.
 */
public final class CountsDigest {

    private long sum;

    /** Adds the triple (store, item, count); a zero count adds nothing. */
    public void add(int storeId, int itemId, int count) {
        if (count != 0) {
            sum += triple(storeId, itemId, count);
        }
    }

    /** The digest as {@code GET /state/summary} writes it: 16 hex digits. */
    public String hex() {
        return "%016x".formatted(sum);
    }

    /** The fingerprint of one triple: SplitMix64's finalizer over the store and item, then the count. */
    static long triple(int storeId, int itemId, int count) {
        return mix(mix(((long) storeId << 32) | itemId) ^ (count * 0x9e3779b97f4a7c15L));
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
