package com.supermarket.contract;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Declares the platform's broker topology: idempotent, so every service applies it at startup
 * and any start order works. Declarations go over AMQP; the sharding and dead-letter policies,
 * which AMQP cannot set, go over the management API.
 *
 * <p>Not thread-safe by itself (an AMQP channel is not); call it from one thread.
 */
public final class BrokerTopology {

    /** Default number of shard queues per broker node for each sharded exchange. */
    public static final int DEFAULT_SHARDS_PER_NODE = 4;

    private final int shardsPerNode;

    public BrokerTopology(int shardsPerNode) {
        if (shardsPerNode < 1) {
            throw new IllegalArgumentException("shardsPerNode must be at least 1: " + shardsPerNode);
        }
        this.shardsPerNode = shardsPerNode;
    }

    public int shardsPerNode() {
        return shardsPerNode;
    }

    /**
     * Declares the exchanges, their bindings, the dead-letter exchange with its parking queue
     * and the store RPC queue.
     *
     * @throws ShardingPluginMissingException if the broker does not know {@code x-modulus-hash}
     * @throws IOException                    for any other broker error
     */
    public void declare(Channel channel) throws IOException {
        try {
            channel.exchangeDeclare(Topology.PURCHASE_EXCHANGE, Topology.SHARDING_EXCHANGE_TYPE, true);
            channel.exchangeDeclare(Topology.STORE_EXCHANGE, Topology.SHARDING_EXCHANGE_TYPE, true);
        } catch (IOException | ShutdownSignalException e) {
            if (String.valueOf(rootMessage(e)).contains("unknown exchange type")) {
                throw new ShardingPluginMissingException(e);
            }
            throw e;
        }
        channel.exchangeDeclare(Topology.INGRESS_EXCHANGE, "fanout", true);
        for (String sharded : Topology.SHARDED_EXCHANGES) {
            channel.exchangeBind(sharded, Topology.INGRESS_EXCHANGE, "");
        }
        channel.exchangeDeclare(Topology.DEAD_LETTER_EXCHANGE, "fanout", true);
        channel.queueDeclare(Topology.PARKING_QUEUE, true, false, false, Map.of());
        channel.queueBind(Topology.PARKING_QUEUE, Topology.DEAD_LETTER_EXCHANGE, "");
        // Requests carry their own expiration (the caller's timeout): a stale request is dropped
        // instead of being answered to nobody. Not durable: a request outlives no broker restart.
        channel.queueDeclare(Topology.STORE_RPC_QUEUE, false, false, false, Map.of());
    }

    /**
     * Sets the sharding policy on both sharded exchanges and the dead-letter policy on their
     * shard queues. The plugin creates the shard queues shortly after (asynchronously).
     */
    public void applyPolicies(ManagementClient management, String vhost) {
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            management.putPolicy(vhost, Topology.shardingPolicyName(exchange), "^" + exchange + "$", "exchanges", 10,
                    Map.of("shards-per-node", shardsPerNode, "routing-key", "shard"));
        }
        management.putPolicy(vhost, Topology.SHARD_QUEUES_POLICY,
                "^" + Topology.shardQueuePrefix("(" + String.join("|", Topology.SHARDED_EXCHANGES) + ")"), "queues", 10,
                Map.of("dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE));
    }

    /** The shard queues of {@code exchange} that exist now, sorted by name. */
    public static List<String> shardQueues(ManagementClient management, String vhost, String exchange) {
        return management.queueNames(vhost, Topology.shardQueuePrefix(exchange));
    }

    private static String rootMessage(Throwable e) {
        StringBuilder messages = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append(' ');
        }
        return messages.toString();
    }

    /** The broker lacks the {@code rabbitmq_sharding} plugin; the message says how to enable it. */
    public static final class ShardingPluginMissingException extends IllegalStateException {
        public ShardingPluginMissingException(Throwable cause) {
            super("RabbitMQ does not know the exchange type " + Topology.SHARDING_EXCHANGE_TYPE
                    + ": the rabbitmq_sharding plugin is not enabled. Enable it on every broker node with "
                    + "'rabbitmq-plugins enable rabbitmq_sharding' (and rabbitmq_management for the policies), "
                    + "then restart this service.", cause);
        }
    }
}
