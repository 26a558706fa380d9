package com.supermarket.contract;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The reply to a {@link StoreQuery}.
 *
 * @param status    how the query ended
 * @param message   a human readable reason when the status is not {@link Status#OK}
 * @param entries   the ranking, most first (ties by lower id); empty unless OK
 * @param purchases for {@link StoreQuery.Kind#TOP_ITEMS}: the distinct purchases the partition
 *                  has counted, over its stores and since its state began; else null (left out
 *                  of the JSON)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StoreQueryReply(Status status, String message, List<Ranked> entries, Long purchases) {

    public StoreQueryReply {
        entries = entries == null ? List.of() : List.copyOf(entries);
    }

    public StoreQueryReply(Status status, String message, List<Ranked> entries) {
        this(status, message, entries, null);
    }

    public static StoreQueryReply ok(List<Ranked> entries) {
        return new StoreQueryReply(Status.OK, null, entries);
    }

    /** A ranking of a partition's items with the purchases it has counted ({@link StoreQuery.Kind#TOP_ITEMS}). */
    public static StoreQueryReply ok(List<Ranked> entries, long purchases) {
        return new StoreQueryReply(Status.OK, null, entries, purchases);
    }

    public static StoreQueryReply notFound(String message) {
        return new StoreQueryReply(Status.NOT_FOUND, message, List.of());
    }

    public static StoreQueryReply badRequest(String message) {
        return new StoreQueryReply(Status.BAD_REQUEST, message, List.of());
    }

    public enum Status { OK, NOT_FOUND, BAD_REQUEST }

    /**
     * One entry of a ranking.
     *
     * @param id       an item id or a store id, depending on the query
     * @param quantity the number of units sold
     */
    public record Ranked(int id, long quantity) {
    }
}
