package com.supermarket.store.durability;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.store.counts.StoreCounts;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.function.IntPredicate;

/**
 * The write-ahead log's record: the purchases of one delivered message, as their effect on the
 * counts. Payload: {@code int purchases}, then per purchase {@code long idHigh, long idLow,
 * int storeId, int lines} and per line {@code int itemId, int quantity}; framed by {@link Frames}.
 * Customer, date and timestamps are not needed to rebuild the counts, so they are not kept.
 *
 * <p>Stateless; thread-safe.
 */
final class LogRecords {

    private LogRecords() {
    }

    /** One sealed frame holding {@code purchases}. */
    static ByteBuffer encode(List<Purchase> purchases) {
        int size = Integer.BYTES;
        for (Purchase purchase : purchases) {
            size += 2 * Long.BYTES + 2 * Integer.BYTES + purchase.items().size() * 2 * Integer.BYTES;
        }
        ByteBuffer frame = Frames.open(size);
        frame.putInt(purchases.size());
        for (Purchase purchase : purchases) {
            frame.putLong(purchase.purchaseId().getMostSignificantBits());
            frame.putLong(purchase.purchaseId().getLeastSignificantBits());
            frame.putInt(purchase.storeId());
            frame.putInt(purchase.items().size());
            for (PurchaseItem item : purchase.items()) {
                frame.putInt(item.itemId());
                frame.putInt(item.quantity());
            }
        }
        return Frames.seal(frame);
    }

    /**
     * Applies every purchase of one record to {@code counts}, each at most once: skips those of
     * the stores for which {@code inSnapshot} holds (their snapshot row was copied after this
     * record was appended), and the dedup window skips those the snapshot or an earlier record
     * already holds.
     *
     * @return how many purchases were applied (not skipped)
     * @throws IllegalStateException if the record names a store or item outside the counts'
     *                               ranges (the ranges were reduced since it was written)
     */
    static int replay(ByteBuffer payload, StoreCounts counts, IntPredicate inSnapshot) {
        int purchases = payload.getInt();
        int applied = 0;
        for (int p = 0; p < purchases; p++) {
            UUID id = new UUID(payload.getLong(), payload.getLong());
            int storeId = payload.getInt();
            int lines = payload.getInt();
            int[] itemIds = new int[lines];
            int[] quantities = new int[lines];
            for (int i = 0; i < lines; i++) {
                itemIds[i] = payload.getInt();
                quantities[i] = payload.getInt();
            }
            if (inSnapshot.test(storeId)) {
                continue;
            }
            try {
                if (counts.apply(id, storeId, itemIds, quantities) == StoreCounts.Outcome.APPLIED) {
                    applied++;
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(e.getMessage() + ": were PLATFORM_MAX_STORES or PLATFORM_MAX_ITEM_ID reduced?", e);
            }
        }
        return applied;
    }
}
