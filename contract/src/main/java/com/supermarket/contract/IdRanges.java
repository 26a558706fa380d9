package com.supermarket.contract;

/**
 * The id ranges of the platform, which every service agrees on ({@code PLATFORM_MAX_STORES},
 * {@code PLATFORM_MAX_ITEM_ID}): stores are 1..maxStores, items 1..maxItemId. Checked where an id
 * enters: purchase-api's request parsing and queries, and a consumer reading a purchase off the
 * wire ({@link #outOfRange}), which parks what is outside rather than count it. Immutable.
 *
 * @param maxStores store ids are 1..maxStores
 * @param maxItemId item ids are 1..maxItemId
 */
public record IdRanges(int maxStores, int maxItemId) {

    /** The configuration prefix of these settings ({@code platform.max-stores}, {@code platform.max-item-id}). */
    public static final String PREFIX = "platform";

    public IdRanges {
        if (maxStores < 1 || maxItemId < 1) {
            throw new IllegalArgumentException("platform.max-stores and platform.max-item-id must be positive: "
                    + maxStores + ", " + maxItemId);
        }
    }

    public boolean isKnownStore(long storeId) {
        return storeId >= 1 && storeId <= maxStores;
    }

    public boolean isKnownItem(long itemId) {
        return itemId >= 1 && itemId <= maxItemId;
    }

    /** Why {@code purchase} names a store or an item outside these ranges; null when it does not. */
    public String outOfRange(Purchase purchase) {
        if (!isKnownStore(purchase.storeId())) {
            return "store " + purchase.storeId() + " outside 1.." + maxStores;
        }
        for (PurchaseItem item : purchase.items()) {
            if (!isKnownItem(item.itemId())) {
                return "item " + item.itemId() + " outside 1.." + maxItemId;
            }
        }
        return null;
    }
}
