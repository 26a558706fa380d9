package com.supermarket.store.counts;

/**
 * What the counts add up to, so that copies of a partition can be compared without shipping
 * them: the distinct purchases counted, the sum of every count, and an order-independent
 * fingerprint of every non-zero (store, item, count) triple (the wrapping sum of a 64-bit mix of
 * each), equal for two copies exactly when their counts are, but for a 2^-64 chance.
 *
 * @param purchases distinct purchases counted
 * @param quantity  the sum of all counts
 * @param digest    the fingerprint, 16 hex digits
 */
public record CountsSummary(long purchases, long quantity, String digest) {

    /**
     * The summary of {@code counts}, each store's row copied under its lock (as a snapshot does),
     * so it is exact per store as of its copy.
     */
    public static CountsSummary of(StoreCounts counts) {
        long[] purchases = {0};
        long[] quantity = {0};
        long[] digest = {0};
        counts.snapshotTo((storeId, itemCounts, storePurchases, recentIds) -> {
            purchases[0] += storePurchases;
            for (int item = 0; item < itemCounts.length; item++) {
                int count = itemCounts[item];
                if (count != 0) {
                    quantity[0] += count;
                    digest[0] += triple(storeId, item + 1, count);
                }
            }
        });
        return new CountsSummary(purchases[0], quantity[0], "%016x".formatted(digest[0]));
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
