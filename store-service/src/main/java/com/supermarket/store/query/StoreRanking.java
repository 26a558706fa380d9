package com.supermarket.store.query;

import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.stereotype.Component;

/**
 * Answers a query from its wire form: decodes and checks it, ranks from the counts, and times
 * it ({@code store.queries}, tagged by kind and status). Every input gets a reply; nothing
 * throws. Thread-safe.
 */
@Component
class StoreRanking {

    private final StoreCounts counts;
    private final int maxLimit;
    private final MeterRegistry registry;

    StoreRanking(StoreCounts counts, QueryProperties properties, MeterRegistry registry) {
        this.counts = counts;
        this.maxLimit = properties.maxLimit();
        this.registry = registry;
    }

    StoreQueryReply answer(byte[] requestBody) {
        long start = System.nanoTime();
        String kind = "unknown";
        StoreQueryReply reply;
        try {
            StoreQuery query = WireFormat.decode(requestBody, StoreQuery.class);
            kind = query.kind().name();
            reply = answer(query);
        } catch (MalformedMessageException e) {
            reply = StoreQueryReply.badRequest("malformed query: " + e.getMessage());
        }
        Timer.builder("store.queries").description("Top-K queries answered, by kind and status")
                .tag("kind", kind).tag("status", reply.status().name())
                .publishPercentileHistogram()
                .register(registry)
                .record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        return reply;
    }

    private StoreQueryReply answer(StoreQuery query) {
        if (query.limit() < 1 || query.limit() > maxLimit) {
            return StoreQueryReply.badRequest("limit must be between 1 and " + maxLimit + ": " + query.limit());
        }
        return switch (query.kind()) {
            case TOP_ITEMS_AT_STORE -> counts.isKnownStore(query.id())
                    ? StoreQueryReply.ok(counts.topItemsAtStore(query.id(), query.limit()))
                    : StoreQueryReply.notFound("store " + query.id() + " not found: stores are 1.." + counts.maxStores());
            case TOP_STORES_FOR_ITEM -> counts.isKnownItem(query.id())
                    ? StoreQueryReply.ok(counts.topStoresForItem(query.id(), query.limit()))
                    : StoreQueryReply.notFound("item " + query.id() + " not found: items are 1.." + counts.maxItemId());
        };
    }
}
