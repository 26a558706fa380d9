package com.supermarket.store.counts;

import java.util.List;
import java.util.UUID;

/**
 * Receives the state of {@link StoreCounts}, one store at a time, for saving it somewhere that
 * survives a restart: the counts together with the dedup window, so that purchases redelivered
 * after a restart (those unacknowledged when the service stopped) are still recognised once
 * the state is loaded back with {@link StoreCounts#restoreStore} before the consumers start.
 *
 * <p>{@link StoreCounts#snapshotTo} calls it from the snapshotting thread only, one store at a
 * time, with arrays the sink may keep.
 */
@FunctionalInterface
public interface SnapshotSink {

    /**
     * @param storeId           the store
     * @param itemCounts        a private copy: quantity per item, index = item id - 1
     * @param purchases         how many purchases the store has counted
     * @param recentPurchaseIds the store's dedup window, oldest first
     */
    void store(int storeId, int[] itemCounts, long purchases, List<UUID> recentPurchaseIds);
}
