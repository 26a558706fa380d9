package com.supermarket.contract;

import java.util.Objects;

/**
 * An RPC request from purchase-api to store-service on {@link Topology#STORE_RPC_QUEUE}.
 *
 * @param kind  which ranking is asked for
 * @param id    the store id (for {@link Kind#TOP_ITEMS_AT_STORE}) or the item id
 * @param limit how many entries at most, 1..{@value #MAX_LIMIT}: purchase-api refuses another
 *              limit, store-service answers one it receives with {@code BAD_REQUEST}
 */
public record StoreQuery(Kind kind, int id, int limit) {

    /** The largest {@code limit} a query may ask for. */
    public static final int MAX_LIMIT = 1000;

    /** Whether {@code limit} is one a query may ask for, 1..{@value #MAX_LIMIT}. */
    public static boolean isValidLimit(long limit) {
        return limit >= 1 && limit <= MAX_LIMIT;
    }

    public StoreQuery {
        Objects.requireNonNull(kind, "kind");
    }

    public enum Kind {
        /** The items sold most at one store ({@code GET /items/store/{storeID}}). */
        TOP_ITEMS_AT_STORE,
        /** The stores that sold one item most ({@code GET /items/top10/{itemID}}). */
        TOP_STORES_FOR_ITEM
    }
}
