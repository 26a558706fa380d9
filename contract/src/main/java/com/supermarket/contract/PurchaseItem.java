package com.supermarket.contract;

/**
 * One line of a purchase.
 *
 * @param itemId   the item, 1..maxItemID
 * @param quantity how many were bought, at least 1
 */
public record PurchaseItem(int itemId, int quantity) {

    public PurchaseItem {
        if (itemId < 1) {
            throw new IllegalArgumentException("itemId must be positive: " + itemId);
        }
        if (quantity < 1) {
            throw new IllegalArgumentException("quantity must be positive: " + quantity);
        }
    }
}
