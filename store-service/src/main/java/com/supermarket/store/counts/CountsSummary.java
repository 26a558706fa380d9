package com.supermarket.store.counts;

import com.supermarket.contract.CountsDigest;

/**
 * What the counts add up to, so that copies of a partition can be compared without shipping
 * them: the distinct purchases counted, the sum of every count, and the contract's
 * {@link CountsDigest} of every (store, item, count).
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
        CountsDigest digest = new CountsDigest();
        counts.snapshotTo((storeId, itemCounts, storePurchases, recentIds) -> {
            purchases[0] += storePurchases;
            for (int item = 0; item < itemCounts.length; item++) {
                int count = itemCounts[item];
                quantity[0] += count;
                digest.add(storeId, item + 1, count);
            }
        });
        return new CountsSummary(purchases[0], quantity[0], digest.hex());
    }
}
