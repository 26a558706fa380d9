package com.supermarket.store.counts;

import java.util.List;
import java.util.UUID;

/**
 * Receives the state of {@link StoreCounts}, one store at a time, for saving it somewhere that
 * survives a restart. Not implemented yet: the counts live in memory only. A future
 * implementation saves the counts together with the dedup window, so that purchases redelivered
 * after a restart (those unacknowledged when the service stopped) are still recognised, and
 * loads them back with {@link StoreCounts#restoreStore} before the consumers start.
 */
@FunctionalInterface
public interface SnapshotSink {

    /**
     * @param storeId           the store
     * @param itemCounts        a private copy: quantity per item, index = item id - 1
     * @param recentPurchaseIds the store's dedup window, oldest first
     */
    void store(int storeId, int[] itemCounts, List<UUID> recentPurchaseIds);
}
