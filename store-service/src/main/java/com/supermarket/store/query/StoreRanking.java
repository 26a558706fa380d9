package com.supermarket.store.query;

import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.springframework.stereotype.Component;

/**
 * Answers a query from its wire form: decodes and checks it, ranks from the counts of this store
 * partition (a store of another partition is refused, never answered empty), and times
 * it ({@code store.queries}, tagged by kind and status). Every input gets a reply; nothing
 * throws. Thread-safe.
 */
@Component
class StoreRanking {

    private static final String UNKNOWN_KIND = "unknown";

    private final StoreCounts counts;
    private final StorePartition partition;
    /** One timer per kind (or "unknown") and status, built once: no registry lookup per query. */
    private final Map<String, Map<StoreQueryReply.Status, Timer>> timers = new HashMap<>();

    StoreRanking(StoreCounts counts, StorePartition partition, MeterRegistry registry) {
        this.counts = counts;
        this.partition = partition;
        List<String> kinds = new ArrayList<>();
        for (StoreQuery.Kind kind : StoreQuery.Kind.values()) {
            kinds.add(kind.name());
        }
        kinds.add(UNKNOWN_KIND);
        for (String kind : kinds) {
            Map<StoreQueryReply.Status, Timer> byStatus = new EnumMap<>(StoreQueryReply.Status.class);
            for (StoreQueryReply.Status status : StoreQueryReply.Status.values()) {
                byStatus.put(status, Timer.builder("store.queries").description("Top-K queries answered, by kind and status")
                        .tag("kind", kind).tag("status", status.name()).publishPercentileHistogram().register(registry));
            }
            timers.put(kind, byStatus);
        }
    }

    /**
     * Answers a {@link StoreQueries} request in its wire form, its AMQP {@code type} and body:
     * one reply per query, in order. A request of another type, or whose body cannot be read as
     * queries, gets one {@code BAD_REQUEST} reply, which the caller cannot match to its queries
     * and reports as a bad reply.
     */
    StoreQueries.Replies answerAll(String type, byte[] requestBody) {
        long start = System.nanoTime();
        if (!StoreQueries.MESSAGE_TYPE.equals(type)) {
            return new StoreQueries.Replies(List.of(malformed(start, "malformed queries: the message type is " + type
                    + ", not " + StoreQueries.MESSAGE_TYPE)));
        }
        StoreQueries queries;
        try {
            queries = WireFormat.decode(requestBody, StoreQueries.class);
        } catch (MalformedMessageException e) {
            return new StoreQueries.Replies(List.of(malformed(start, "malformed queries: " + e.getMessage())));
        }
        List<StoreQueryReply> replies = new ArrayList<>(queries.queries().size());
        for (StoreQuery query : queries.queries()) {
            replies.add(answer(query));
        }
        return new StoreQueries.Replies(replies);
    }

    private StoreQueryReply malformed(long start, String message) {
        StoreQueryReply reply = StoreQueryReply.badRequest(message);
        timers.get(UNKNOWN_KIND).get(reply.status()).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        return reply;
    }

    private StoreQueryReply answer(StoreQuery query) {
        long start = System.nanoTime();
        StoreQueryReply reply = rank(query);
        timers.get(query.kind().name()).get(reply.status()).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        return reply;
    }

    private StoreQueryReply rank(StoreQuery query) {
        return switch (query.kind()) {
            case TOP_ITEMS_AT_STORE -> limited(query, () -> !counts.isKnownStore(query.id())
                    ? StoreQueryReply.notFound("store " + query.id() + " not found: stores are 1.." + counts.maxStores())
                    : partition.owns(query.id()) ? StoreQueryReply.ok(counts.topItemsAtStore(query.id(), query.limit()))
                    // Never an empty answer for a store counted elsewhere: the asker disagrees on STORE_PARTITIONS.
                    : StoreQueryReply.badRequest("store " + query.id() + " belongs to store partition "
                            + StorePartition.ownerOf(query.id(), partition.partitions()) + ", not to this " + partition
                            + ": do purchase-api and store-service agree on STORE_PARTITIONS?"));
            case TOP_STORES_FOR_ITEM -> limited(query, () -> counts.isKnownItem(query.id())
                    ? StoreQueryReply.ok(counts.topStoresForItem(query.id(), query.limit()))
                    : StoreQueryReply.notFound("item " + query.id() + " not found: items are 1.." + counts.maxItemId()));
            case TOP_ITEMS -> limited(query, () -> {
                // Read before the items: the purchases never run ahead of the quantities beside them.
                long purchases = counts.purchases();
                return StoreQueryReply.ok(counts.topItems(query.limit()), purchases);
            });
            case ITEMS_SOLD_AT_LEAST -> query.atLeast() == null || query.atLeast() < 1
                    ? StoreQueryReply.badRequest("atLeast must be at least 1: " + query.atLeast())
                    : StoreQueryReply.ok(counts.itemsSoldAtLeast(query.atLeast()));
            case ITEM_TOTALS -> itemTotals(query.items());
        };
    }

    /** {@code answer}'s reply when the query's limit is one a query may ask for, else {@code BAD_REQUEST}. */
    private static StoreQueryReply limited(StoreQuery query, Supplier<StoreQueryReply> answer) {
        return StoreQuery.isValidLimit(query.limit()) ? answer.get()
                : StoreQueryReply.badRequest("limit must be between 1 and " + StoreQuery.MAX_LIMIT + ": " + query.limit());
    }

    private StoreQueryReply itemTotals(List<Integer> items) {
        if (items == null || items.isEmpty() || items.size() > counts.maxItemId()) {
            return StoreQueryReply.badRequest("items must name 1.." + counts.maxItemId() + " items: "
                    + (items == null ? "none" : items.size()));
        }
        List<Ranked> totals = new ArrayList<>(items.size());
        for (int item : items) {
            if (!counts.isKnownItem(item)) {
                return StoreQueryReply.notFound("item " + item + " not found: items are 1.." + counts.maxItemId());
            }
            totals.add(new Ranked(item, counts.itemTotal(item)));
        }
        return StoreQueryReply.ok(totals);
    }
}
