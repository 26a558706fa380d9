package com.supermarket.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.CustomExchange;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.Queue;

/**
 * The platform's broker topology, in one place for every service and test: the exchanges,
 * queues and bindings as {@link Declarables} (declared over AMQP), and the sharding and
 * dead-letter policies (set over the management API, which AMQP cannot do). Everything is
 * idempotent, so any service may start first. {@link BrokerSetup} applies both.
 *
 * <p>A service registers {@link #declarables()} as a bean, so Spring's {@code RabbitAdmin}
 * declares it again on every new connection (the non-durable RPC queue does not survive a broker
 * restart). Stateless and thread-safe.
 */
public final class BrokerTopology {

    /** Default number of shard queues per broker node for each sharded exchange. */
    public static final int DEFAULT_SHARDS_PER_NODE = 4;

    private BrokerTopology() {
    }

    /**
     * The exchanges, their bindings, the dead-letter exchange with its parking queue and the
     * store RPC queue; a new object on each call.
     */
    public static Declarables declarables() {
        FanoutExchange ingress = new FanoutExchange(Topology.INGRESS_EXCHANGE, true, false);
        FanoutExchange deadLetter = new FanoutExchange(Topology.DEAD_LETTER_EXCHANGE, true, false);
        Queue parking = new Queue(Topology.PARKING_QUEUE, true, false, false);
        List<Declarable> declarables = new ArrayList<>();
        for (String sharded : Topology.SHARDED_EXCHANGES) {
            declarables.add(new CustomExchange(sharded, Topology.SHARDING_EXCHANGE_TYPE, true, false));
        }
        declarables.add(ingress);
        for (String sharded : Topology.SHARDED_EXCHANGES) {
            declarables.add(new Binding(sharded, Binding.DestinationType.EXCHANGE, Topology.INGRESS_EXCHANGE, "", null));
        }
        declarables.add(deadLetter);
        declarables.add(parking);
        declarables.add(new Binding(Topology.PARKING_QUEUE, Binding.DestinationType.QUEUE, Topology.DEAD_LETTER_EXCHANGE, "", null));
        // Requests carry their own expiration: a stale request is dropped instead of being
        // answered to nobody. Not durable: a request outlives no broker restart.
        declarables.add(new Queue(Topology.STORE_RPC_QUEUE, false, false, false));
        return new Declarables(declarables);
    }

    /**
     * Declares {@link #declarables()} now, in order, through {@code admin}, so that a failure is
     * seen by the caller rather than only logged by a connection listener.
     *
     * @throws ShardingPluginMissingException if the broker does not know {@code x-modulus-hash}
     * @throws AmqpException                  for any other broker error (e.g. unreachable)
     */
    public static void declare(AmqpAdmin admin) {
        try {
            for (Declarable declarable : declarables().getDeclarables()) {
                switch (declarable) {
                    case Exchange exchange -> admin.declareExchange(exchange);
                    case Queue queue -> admin.declareQueue(queue);
                    case Binding binding -> admin.declareBinding(binding);
                    default -> throw new IllegalStateException("unexpected declarable " + declarable);
                }
            }
        } catch (AmqpException e) {
            if (causes(e).contains("unknown exchange type")) {
                throw new ShardingPluginMissingException(e);
            }
            throw e;
        }
    }

    /**
     * Sets the sharding policy ({@code shardsPerNode} shard queues per node) on both sharded
     * exchanges and the dead-letter policy on their shard queues. The plugin creates the shard
     * queues shortly after (asynchronously).
     */
    public static void applyPolicies(ManagementClient management, String vhost, int shardsPerNode) {
        if (shardsPerNode < 1) {
            throw new IllegalArgumentException("shardsPerNode must be at least 1: " + shardsPerNode);
        }
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

    private static String causes(Throwable e) {
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
                    + "'rabbitmq-plugins enable rabbitmq_sharding' (and rabbitmq_management for the policies); "
                    + "this service keeps retrying and turns ready once it is", cause);
        }
    }
}
