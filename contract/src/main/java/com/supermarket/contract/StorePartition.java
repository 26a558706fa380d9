package com.supermarket.contract;

import java.util.ArrayList;
import java.util.List;

/**
 * Which stores a store-service partition owns, and where it is asked: the one ownership rule of
 * purchase-api (where a query goes) and store-service (which shard queues it consumes).
 *
 * <p>With {@code partitions} = P partitions and N shard queues behind {@code storeX}, purchase-api
 * routes store {@code s} to the shard queue at index {@code s mod N} ({@link Topology#routingKey}),
 * the index being the queue's place in the exchange's order of its bindings, which is the order of
 * the queue names ({@link #exchangeOrder}). Partition {@code p} consumes the queues at the indexes
 * {@code i} with {@code i mod P == p}; when P divides N these hold exactly the stores
 * {@code s mod P == p}, whatever N is, so a store's owner does not change when the shard count
 * does (as long as P still divides it). When P does not divide N the stores of one queue would
 * belong to several partitions: {@link #splitProblem} says so, and neither service goes on.
 *
 * <p>Immutable; thread-safe.
 *
 * @param index      this partition, 0..partitions-1
 * @param partitions how many partitions the stores are split into (P)
 */
public record StorePartition(int index, int partitions) {

    public StorePartition {
        if (partitions < 1 || index < 0 || index >= partitions) {
            throw new IllegalArgumentException("a store partition must be within 0.." + (partitions - 1) + " of "
                    + partitions + " partition(s) (STORE_PARTITION_INDEX, STORE_PARTITIONS): " + index);
        }
    }

    /** The partition that owns {@code storeId} of {@code partitions}. */
    public static int ownerOf(int storeId, int partitions) {
        return Math.floorMod(storeId, partitions);
    }

    /** Whether this partition owns {@code storeId}. */
    public boolean owns(int storeId) {
        return ownerOf(storeId, partitions) == index;
    }

    /** The queue this partition answers queries on ({@link Topology#storeQueryQueue}). */
    public String queryQueue() {
        return Topology.storeQueryQueue(index, partitions);
    }

    /**
     * Why {@code shards} shard queues cannot be split over {@code partitions} partitions, or
     * null when they can (P divides N).
     */
    public static String splitProblem(int shards, int partitions) {
        return shards % partitions == 0 ? null : shards + " storeX shard queue(s) cannot be split over " + partitions
                + " store partitions (STORE_PARTITIONS): the shard count must be a multiple of the partition count, "
                + "or the stores of one shard queue would belong to several partitions";
    }

    /**
     * The shard queues of this partition among {@code shardQueues}, every shard queue of
     * {@code storeX}: those at the indexes {@code i mod partitions == index} of the
     * {@linkplain #exchangeOrder exchange's order}.
     *
     * @throws IllegalStateException with {@link #splitProblem} when the partitions do not divide
     *                               the shard queues
     */
    public List<String> ownedShards(List<String> shardQueues) {
        String problem = splitProblem(shardQueues.size(), partitions);
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
        List<String> ordered = exchangeOrder(shardQueues);
        List<String> owned = new ArrayList<>();
        for (int i = index; i < ordered.size(); i += partitions) {
            owned.add(ordered.get(i));
        }
        return owned;
    }

    /**
     * The order in which an {@value Topology#SHARDING_EXCHANGE_TYPE} exchange indexes its bound
     * queues: by name, byte by byte ({@code .shard.10} before {@code .shard.2}), the order of
     * the broker's routing table. {@code StorePartitionsIT} checks it on the broker, in both
     * topology modes.
     */
    public static List<String> exchangeOrder(List<String> shardQueues) {
        List<String> ordered = new ArrayList<>(shardQueues);
        // String order is byte order for the ASCII names the platform and the plugin give.
        ordered.sort(null);
        return ordered;
    }

    @Override
    public String toString() {
        return "store partition " + index + " of " + partitions;
    }
}
