package com.supermarket.contract;

import java.util.List;

/**
 * The reply to a {@link StoreQuery}.
 *
 * @param status  how the query ended
 * @param message a human readable reason when the status is not {@link Status#OK}
 * @param entries the ranking, most first (ties by lower id); empty unless OK
 */
public record StoreQueryReply(Status status, String message, List<Ranked> entries) {

    public StoreQueryReply {
        entries = entries == null ? List.of() : List.copyOf(entries);
    }

    public static StoreQueryReply ok(List<Ranked> entries) {
        return new StoreQueryReply(Status.OK, null, entries);
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
