package com.supermarket.api.items;

import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The chain's top items ({@code GET /items/top}): the {@code limit} items sold most over every
 * store, most first, ties by lower item id, exact, from the store partitions' own totals.
 *
 * <p>Unlike {@link TopStores}, the partitions' top lists cannot simply be merged: an item's sales
 * are split over every partition, so an item in no partition's top {@code limit} can still be
 * the chain's first (second in every partition). This is the three-phase uniform threshold
 * algorithm (TPUT; Cao and Wang, "Efficient top-K query calculation in distributed networks",
 * PODC 2004), over P partitions:
 * <ol>
 *   <li>each partition's top {@code limit} ({@code TOP_ITEMS}, with the purchases it counted).
 *       Summed, the {@code limit}-th largest partial total, {@code tau1}, is a lower bound of the
 *       chain's {@code limit}-th total. One partition, or lists shorter than {@code limit}
 *       everywhere (every item with sales is in them): the answer, exact.</li>
 *   <li>each partition's items sold at least {@code T = ceil(tau1 / P)} times
 *       ({@code ITEMS_SOLD_AT_LEAST}). An item none of them names sold less than {@code T} at
 *       every partition, under {@code tau1} in all: out. An item sold less than {@code T} at the
 *       partitions that do not name it has at most its known part plus {@code T - 1} per such
 *       partition; those whose bound is under the {@code limit}-th largest known part
 *       {@code tau2} are out.</li>
 *   <li>the exact totals of the items left ({@code ITEM_TOTALS}) from the partitions that did
 *       not name them; their top {@code limit} is the answer.</li>
 * </ol>
 * Rounds 2 and 3 are asked only with several partitions; round 3 only for what round 2 left
 * unknown. What round 2 returns grows as the sales are flat: at worst every item with sales.
 *
 * <p>While purchases arrive the partitions' totals grow between the rounds; each figure
 * answered is then a partition's total as of some moment of the query (as {@link TopStores}'s),
 * and the purchases are those counted by the time of round 1. Once they stop, the answer equals
 * a count over every purchase.
 *
 * <p>Stateless; each query's state lives in its own {@link Merge}, whose rounds run one after
 * the other.
 */
final class TopItems {

    private static final Comparator<Ranked> MOST_FIRST =
            Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id);
    private static final long UNKNOWN = -1;

    /** How a query is asked of one partition (the client's lanes). */
    @FunctionalInterface
    interface Partitions {
        CompletableFuture<StoreQueryReply> ask(StoreQuery query, int partition);
    }

    private TopItems() {
    }

    /**
     * The chain's top {@code limit} items over {@code partitions} partitions, with the purchases
     * counted ({@link StoreQueryReply#purchases()}); or the first reply that is not {@code OK},
     * which stands for all; or the first failure of a partition.
     */
    static CompletableFuture<StoreQueryReply> merged(int partitions, int limit, Partitions ask) {
        if (partitions == 1) {
            return ask.ask(StoreQuery.topItems(limit), 0);
        }
        return new Merge(partitions, limit, ask).start();
    }

    /** One query's rounds; each runs once the previous one's replies are all in. */
    private static final class Merge {

        private final int partitions;
        private final int limit;
        private final Partitions ask;
        /** What each partition sold of an item, as far as known (UNKNOWN where not). */
        private final Map<Integer, long[]> known = new HashMap<>();
        private long purchases;
        /** Round 2's threshold: an item a partition did not name then sold less there. */
        private long threshold;

        Merge(int partitions, int limit, Partitions ask) {
            this.partitions = partitions;
            this.limit = limit;
            this.ask = ask;
        }

        CompletableFuture<StoreQueryReply> start() {
            return PartitionReplies.then(askAll(StoreQuery.topItems(limit)), this::afterTopItems);
        }

        private CompletableFuture<StoreQueryReply> afterTopItems(List<StoreQueryReply> replies) {
            boolean complete = true;
            for (int partition = 0; partition < partitions; partition++) {
                StoreQueryReply reply = replies.get(partition);
                if (reply.status() != StoreQueryReply.Status.OK) {
                    return CompletableFuture.completedFuture(reply);
                }
                purchases += reply.purchases() == null ? 0 : reply.purchases();
                complete &= reply.entries().size() < limit;
                learn(partition, reply.entries());
            }
            if (complete) {
                return answer(known.keySet());
            }
            long tau1 = limitth(partialTotals());
            threshold = Math.max(1, Math.ceilDiv(tau1, partitions));
            return PartitionReplies.then(askAll(StoreQuery.itemsSoldAtLeast(threshold)), this::afterSoldAtLeast);
        }

        private CompletableFuture<StoreQueryReply> afterSoldAtLeast(List<StoreQueryReply> replies) {
            for (int partition = 0; partition < partitions; partition++) {
                StoreQueryReply reply = replies.get(partition);
                if (reply.status() != StoreQueryReply.Status.OK) {
                    return CompletableFuture.completedFuture(reply);
                }
                learn(partition, reply.entries());
            }
            long tau2 = limitth(partialTotals());
            List<Integer> candidates = new ArrayList<>();
            List<List<Integer>> unknownAt = new ArrayList<>();
            for (int partition = 0; partition < partitions; partition++) {
                unknownAt.add(new ArrayList<>());
            }
            known.forEach((item, sold) -> {
                long bound = 0;
                for (long quantity : sold) {
                    bound += quantity == UNKNOWN ? threshold - 1 : quantity;
                }
                if (bound >= tau2) {
                    candidates.add(item);
                    for (int partition = 0; partition < partitions; partition++) {
                        if (sold[partition] == UNKNOWN) {
                            unknownAt.get(partition).add(item);
                        }
                    }
                }
            });
            List<Integer> asked = new ArrayList<>();
            List<CompletableFuture<StoreQueryReply>> totals = new ArrayList<>();
            for (int partition = 0; partition < partitions; partition++) {
                if (!unknownAt.get(partition).isEmpty()) {
                    asked.add(partition);
                    totals.add(ask.ask(StoreQuery.itemTotals(unknownAt.get(partition)), partition));
                }
            }
            if (totals.isEmpty()) {
                return answer(candidates);
            }
            return PartitionReplies.then(totals, exact -> {
                for (int i = 0; i < asked.size(); i++) {
                    StoreQueryReply reply = exact.get(i);
                    if (reply.status() != StoreQueryReply.Status.OK) {
                        return CompletableFuture.completedFuture(reply);
                    }
                    learn(asked.get(i), reply.entries());
                }
                return answer(candidates);
            });
        }

        private List<CompletableFuture<StoreQueryReply>> askAll(StoreQuery query) {
            List<CompletableFuture<StoreQueryReply>> replies = new ArrayList<>(partitions);
            for (int partition = 0; partition < partitions; partition++) {
                replies.add(ask.ask(query, partition));
            }
            return replies;
        }

        /** Records what {@code partition} said it sold; a later, larger figure of a growing total wins. */
        private void learn(int partition, List<Ranked> entries) {
            for (Ranked entry : entries) {
                long[] sold = known.computeIfAbsent(entry.id(), item -> {
                    long[] fresh = new long[partitions];
                    Arrays.fill(fresh, UNKNOWN);
                    return fresh;
                });
                sold[partition] = Math.max(sold[partition], entry.quantity());
            }
        }

        /** Each known item's total over the partitions that named it. */
        private List<Ranked> partialTotals() {
            List<Ranked> totals = new ArrayList<>(known.size());
            known.forEach((item, sold) -> totals.add(new Ranked(item, knownPart(sold))));
            return totals;
        }

        /** The {@code limit}-th largest quantity of {@code totals}, 0 when there are fewer. */
        private long limitth(List<Ranked> totals) {
            if (totals.size() < limit) {
                return 0;
            }
            long[] quantities = totals.stream().mapToLong(Ranked::quantity).sorted().toArray();
            return quantities[quantities.length - limit];
        }

        /** The top {@code limit} of {@code items}, whose every part is known (an unknown one is 0: not sold there). */
        private CompletableFuture<StoreQueryReply> answer(Iterable<Integer> items) {
            List<Ranked> totals = new ArrayList<>();
            for (int item : items) {
                long total = knownPart(known.get(item));
                if (total > 0) {
                    totals.add(new Ranked(item, total));
                }
            }
            totals.sort(MOST_FIRST);
            return CompletableFuture.completedFuture(StoreQueryReply.ok(totals.subList(0, Math.min(limit, totals.size())), purchases));
        }

        private static long knownPart(long[] sold) {
            long total = 0;
            for (long quantity : sold) {
                total += Math.max(0, quantity);
            }
            return total;
        }
    }
}
