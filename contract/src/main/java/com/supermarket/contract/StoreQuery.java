package com.supermarket.contract;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;

/**
 * An RPC request from purchase-api to store-service on {@link Topology#STORE_RPC_QUEUE}.
 *
 * <p>The fields a kind does not use are left out of its JSON ({@code atLeast}, {@code items}
 * null), so the queries of the two public rankings are the same bytes a store-service that knows
 * only those reads.
 *
 * @param kind    which ranking is asked for
 * @param id      the store id (for {@link Kind#TOP_ITEMS_AT_STORE}) or the item id (for
 *                {@link Kind#TOP_STORES_FOR_ITEM}); 0 for the other kinds
 * @param limit   how many entries at most, 1..{@value #MAX_LIMIT}: purchase-api refuses another
 *                limit, store-service answers one it receives with {@code BAD_REQUEST}; 0 for
 *                {@link Kind#ITEMS_SOLD_AT_LEAST} and {@link Kind#ITEM_TOTALS}, whose answers
 *                are as long as they must be
 * @param atLeast for {@link Kind#ITEMS_SOLD_AT_LEAST}: the least quantity, at least 1; else null
 * @param items   for {@link Kind#ITEM_TOTALS}: the item ids asked, at least one; else null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StoreQuery(Kind kind, int id, int limit, Long atLeast, List<Integer> items) {

    /** The largest {@code limit} a query may ask for. */
    public static final int MAX_LIMIT = 1000;

    /** Whether {@code limit} is one a query may ask for, 1..{@value #MAX_LIMIT}. */
    public static boolean isValidLimit(long limit) {
        return limit >= 1 && limit <= MAX_LIMIT;
    }

    public StoreQuery {
        Objects.requireNonNull(kind, "kind");
        items = items == null ? null : List.copyOf(items);
    }

    /** A query of one of the public rankings, or of {@link Kind#TOP_ITEMS} (id 0). */
    public StoreQuery(Kind kind, int id, int limit) {
        this(kind, id, limit, null, null);
    }

    /** The {@code limit} items a partition sold most over its stores. */
    public static StoreQuery topItems(int limit) {
        return new StoreQuery(Kind.TOP_ITEMS, 0, limit);
    }

    /** Every item a partition sold at least {@code atLeast} of over its stores. */
    public static StoreQuery itemsSoldAtLeast(long atLeast) {
        return new StoreQuery(Kind.ITEMS_SOLD_AT_LEAST, 0, 0, atLeast, null);
    }

    /** What a partition sold of each of {@code items} over its stores. */
    public static StoreQuery itemTotals(List<Integer> items) {
        return new StoreQuery(Kind.ITEM_TOTALS, 0, 0, null, items);
    }

    /**
     * What is asked. The last three rank the items over every store of the partition asked:
     * purchase-api merges them into the chain's top items ({@code GET /items/top}), exactly,
     * over several partitions in up to three rounds (its {@code TopItems}).
     */
    public enum Kind {
        /** The items sold most at one store ({@code GET /items/store/{storeID}}). */
        TOP_ITEMS_AT_STORE,
        /** The stores that sold one item most ({@code GET /items/top10/{itemID}}). */
        TOP_STORES_FOR_ITEM,
        /**
         * The items sold most over the partition's stores, most first, ties by lower id; the
         * reply also carries the purchases the partition has counted
         * ({@link StoreQueryReply#purchases()}).
         */
        TOP_ITEMS,
        /** Every item sold at least {@code atLeast} times over the partition's stores, most first. */
        ITEMS_SOLD_AT_LEAST,
        /** The quantity sold of each of {@code items} over the partition's stores, one entry each, in their order (0 included). */
        ITEM_TOTALS
    }
}
