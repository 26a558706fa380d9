package com.supermarket.contract;

import java.util.ArrayList;
import java.util.List;

/**
 * The names of every broker object the platform uses: the one source of truth for the
 * services, the tests and the deployment files (whose validation compares against these).
 *
 * <p>A purchase enters through {@link #INGRESS_EXCHANGE}, a fanout exchange bound to the two
 * sharded exchanges; each of those is of type {@value #SHARDING_EXCHANGE_TYPE} (the
 * {@code rabbitmq_sharding} plugin) and spreads messages over its shard queues by a hash of the
 * routing key, the store id. Consumers read the shard queues by their explicit names.
 */
public final class Topology {

    /** Fanout exchange purchase-api publishes to; bound to both sharded exchanges. */
    public static final String INGRESS_EXCHANGE = "purchases";

    /** Sharded exchange consumed by purchases-service (durable storage). */
    public static final String PURCHASE_EXCHANGE = "purchaseX";

    /** Sharded exchange consumed by store-service (the in-memory counts). */
    public static final String STORE_EXCHANGE = "storeX";

    /**
     * The sharded exchange of store-service copy group {@code copy} (0..copies-1,
     * {@code platform.broker.store-copies}): {@link #STORE_EXCHANGE} itself for copy 0, so one
     * copy keeps the name it always had; {@code storeX.c<copy>} otherwise. Each is bound to
     * {@link #INGRESS_EXCHANGE}, so every copy group receives every purchase on its own shard
     * queues ({@code sharding: storeX.c1 - <node> - <i>}, or {@code storeX.c1.shard.<i>} in the
     * replicated mode).
     */
    public static String storeExchange(int copy) {
        if (copy < 0) {
            throw new IllegalArgumentException("a store copy is 0 or more: " + copy);
        }
        return copy == 0 ? STORE_EXCHANGE : STORE_EXCHANGE + ".c" + copy;
    }

    /** Where consumers' rejected (poison) messages go. */
    public static final String DEAD_LETTER_EXCHANGE = "purchases.dlx";

    /** Durable queue behind {@link #DEAD_LETTER_EXCHANGE}, for an operator to inspect. */
    public static final String PARKING_QUEUE = "purchases.parking";

    /**
     * Name of the policy that lets the parking queue redeliver without limit in the replicated
     * mode, where it is a quorum queue (which drops a message after 20 deliveries by default).
     */
    public static final String PARKING_POLICY = "purchases-parking";

    /**
     * Request queue of the store-service RPC server (the GET queries). Durable: RabbitMQ 4.3
     * refuses transient non-exclusive queues. Named anew (it was the transient {@code store.rpc})
     * so that a vhost still holding the old transient queue never answers a re-declare with
     * {@code PRECONDITION_FAILED}; the old one is left unused and vanishes at the broker's
     * next restart.
     */
    public static final String STORE_RPC_QUEUE = "store.queries";

    /**
     * The query queue of store partition {@code partition} of {@code partitions}
     * ({@link StorePartition}): {@link #STORE_RPC_QUEUE} itself when there is one partition, so a
     * single partition keeps the name it always had; {@code store.queries.p<partition>} otherwise.
     * Copies of a partition share its queue.
     */
    public static String storeQueryQueue(int partition, int partitions) {
        return partitions == 1 ? STORE_RPC_QUEUE : STORE_RPC_QUEUE + ".p" + partition;
    }

    /** The exchange type of the sharding plugin. */
    public static final String SHARDING_EXCHANGE_TYPE = "x-modulus-hash";

    /** Name of the policy that shards the exchange {@code exchange}. */
    public static String shardingPolicyName(String exchange) {
        return exchange + "-sharding";
    }

    /** Name of the policy that dead-letters rejected messages from every shard queue. */
    public static final String SHARD_QUEUES_POLICY = "shard-queues";

    /**
     * The prefix of the shard queues of {@code exchange}; the plugin names them
     * {@code "sharding: <exchange> - <node> - <index>"}.
     */
    public static String shardQueuePrefix(String exchange) {
        return "sharding: " + exchange + " - ";
    }

    /**
     * The name of replicated shard {@code index} of {@code exchange} in the {@code replicated}
     * topology mode: a quorum queue the platform declares itself and binds to the exchange.
     * Never the exchange's own name, which the sharding plugin reserves for its pseudo-queue.
     */
    public static String replicatedShardName(String exchange, int index) {
        return exchange + ".shard." + index;
    }

    /** The fixed shard queue names of {@code exchange} in {@code replicated} mode, in order. */
    public static List<String> replicatedShards(String exchange, int count) {
        List<String> names = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            names.add(replicatedShardName(exchange, i));
        }
        return names;
    }

    /**
     * The routing key of a message holding purchases of {@code storeId} when {@code shards} shard
     * queues are bound to each sharded exchange: the key that {@value #SHARDING_EXCHANGE_TYPE}
     * sends to shard queue number {@code storeId mod shards} ({@link ModulusHashKeys}): the
     * shard queue of index {@code storeId mod shards}, which tests and tools use to reach a
     * given queue (purchase-api routes a store partition's batches with
     * {@link #routingKey(int, int, long, int)}). Beyond {@link ModulusHashKeys#MAX_QUEUES}
     * shards, the indexes spread over the shard queues the table reaches.
     */
    public static String routingKey(int storeId, int shards) {
        List<String> keys = ModulusHashKeys.forQueues(shards);
        return keys.get(Math.floorMod(storeId, keys.size()));
    }

    /**
     * The routing key of the {@code turn}-th batch of purchases of store partition
     * {@code partition} (of {@code partitions}) when {@code shards} shard queues are bound to each
     * sharded exchange: the partition's shard queues (the indexes {@code i mod partitions ==
     * partition}, {@link StorePartition#ownedShards}) in rotation, one batch each. A batch holds
     * the purchases of one partition, of any of its stores, so the consumers of each partition
     * see only their own stores while every shard queue gets its share and batches stay as large
     * as the load makes them. Counting and storing do not depend on the order of a store's
     * purchases, and the consumers deduplicate per purchase id, so a store's purchases may take
     * any of its partition's queues.
     *
     * @throws IllegalArgumentException when the partitions do not divide the shards
     *                                  ({@link StorePartition#splitProblem}) or they exceed
     *                                  {@link ModulusHashKeys#MAX_QUEUES}
     */
    public static String routingKey(int partition, int partitions, long turn, int shards) {
        List<String> keys = ModulusHashKeys.forQueues(shards);
        if (partition < 0 || partition >= partitions || keys.size() != shards || shards % partitions != 0) {
            throw new IllegalArgumentException("no shard queue of store partition " + partition + " of " + partitions
                    + " among " + shards + " (the partitions must divide at most " + ModulusHashKeys.MAX_QUEUES + " shard queues)");
        }
        return keys.get(partition + partitions * (int) Math.floorMod(turn, (long) (shards / partitions)));
    }

    /**
     * The sharded exchanges with one store copy group, each consumed by one service; with more
     * copies, one per copy group ({@link #storeExchange}).
     */
    public static final List<String> SHARDED_EXCHANGES = List.of(PURCHASE_EXCHANGE, STORE_EXCHANGE);

    private Topology() {
    }
}
