package com.supermarket.api.auth;

/** What a request asks to do, as far as till authentication cares. */
public enum Access {
    /** {@code POST /purchase/{storeID}/...}: the store's till key only. */
    PURCHASE,
    /** {@code GET /items/store/{storeID}}: the store's key or a manager key. */
    STORE_QUERY,
    /**
     * {@code GET /items/top10/{itemID}}, {@code /items/top5/{itemID}} and {@code /items/top}
     * (the chain's top items): every store's figures, a manager key.
     */
    ITEM_QUERY
}
