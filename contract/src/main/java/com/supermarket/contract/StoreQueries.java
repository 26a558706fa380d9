package com.supermarket.contract;

import java.util.List;

/**
 * Several {@link StoreQuery}s in one RPC request on {@link Topology#STORE_RPC_QUEUE}, answered
 * by one {@link Replies} message holding one reply per query, in the queries' order.
 * purchase-api sends together the queries that arrive while earlier ones await their replies:
 * one message, one delivery and one reply for many GETs.
 *
 * <p>The AMQP {@code type} property is {@value #MESSAGE_TYPE}; a request of any other type, or
 * of none, is answered by one {@code BAD_REQUEST} reply.
 *
 * @param queries at least one
 */
public record StoreQueries(List<StoreQuery> queries) {

    public static final String MESSAGE_TYPE = "store-queries/1";

    public StoreQueries {
        queries = List.copyOf(queries);
        if (queries.isEmpty()) {
            throw new IllegalArgumentException("a batch of store queries without queries");
        }
    }

    /**
     * The answer to {@link StoreQueries}.
     *
     * @param replies one per query, in the queries' order
     */
    public record Replies(List<StoreQueryReply> replies) {

        public Replies {
            replies = List.copyOf(replies);
        }
    }
}
