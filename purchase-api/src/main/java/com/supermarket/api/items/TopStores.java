package com.supermarket.api.items;

import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The top stores of an item over every store partition, from each partition's top stores: the
 * {@code limit} stores that sold the item most, most first, ties by lower store id (store-service's
 * order). Exact: each store is counted by one partition only, so a store in the overall top
 * {@code limit} is in its own partition's top {@code limit}. Stateless; thread-safe.
 */
final class TopStores {

    private static final Comparator<Ranked> MOST_FIRST =
            Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id);

    private TopStores() {
    }

    /**
     * The merged answer of {@code replies}, one per partition: completed once every partition has
     * answered, or failed as soon as one fails, with its failure (never a partial list).
     */
    static CompletableFuture<StoreQueryReply> merged(List<CompletableFuture<StoreQueryReply>> replies, int limit) {
        if (replies.size() == 1) {
            return replies.getFirst();
        }
        return PartitionReplies.then(replies, all -> CompletableFuture.completedFuture(merge(all, limit)));
    }

    /**
     * The top {@code limit} of the partitions' lists; the first reply that is not {@code OK}
     * (e.g. an unknown item, the same at every partition) stands for all.
     */
    static StoreQueryReply merge(List<StoreQueryReply> replies, int limit) {
        List<Ranked> all = new ArrayList<>();
        for (StoreQueryReply reply : replies) {
            if (reply.status() != StoreQueryReply.Status.OK) {
                return reply;
            }
            all.addAll(reply.entries());
        }
        all.sort(MOST_FIRST);
        return StoreQueryReply.ok(all.subList(0, Math.min(limit, all.size())));
    }
}
