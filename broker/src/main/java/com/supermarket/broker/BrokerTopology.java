package com.supermarket.broker;

import com.supermarket.contract.Topology;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The platform's broker topology, in one place for every service and test: the exchanges,
 * queues and bindings as {@link Declarables} (declared over AMQP), and the policies (set over the
 * management API, which AMQP cannot do): the shard queues' dead-lettering and bound in both modes,
 * the sharding policies in the {@code sharded} mode. Everything is idempotent, so any service may
 * start first. {@link BrokerSetup} applies both.
 *
 * <p>The {@linkplain BrokerSettings.TopologyMode mode} decides what is behind the two
 * {@code x-modulus-hash} exchanges: the sharding plugin's classic queues ({@code sharded}), or
 * {@code replicatedShards} quorum queues per exchange declared here and bound to the exchange
 * itself ({@code replicated}), each with a single active consumer, a delivery limit and the
 * dead-letter exchange as arguments. In {@code replicated} mode the parking queue and the RPC
 * queue are quorum queues too: nothing the platform keeps lives on one node only; one policy
 * lifts the parking queue's delivery limit. Nothing declared here
 * uses a feature RabbitMQ 4.3 deprecates (the tests run with every one denied).
 *
 * <p>A service registers {@link #declarables(BrokerSettings)} as a bean, so Spring's
 * {@code RabbitAdmin} declares it again on every new connection. Stateless and thread-safe.
 */
public final class BrokerTopology {

    /** Default number of shard queues per broker node for each sharded exchange. */
    public static final int DEFAULT_SHARDS_PER_NODE = 4;

    /** Default number of quorum queues per sharded exchange in the {@code replicated} mode. */
    public static final int DEFAULT_REPLICATED_SHARDS = 8;

    /**
     * Deliveries of one message a replicated shard allows before dead-lettering it. The
     * listeners reject poison at once (no requeue); this bounds what they cannot: a message whose
     * consumer dies with it each time (a crash loop). Generous, because every node loss returns
     * the unacknowledged messages of the consumers connected to it, counting one delivery each.
     */
    public static final int REPLICATED_DELIVERY_LIMIT = 20;

    /**
     * The parking queue's delivery limit: none. From RabbitMQ 4.0 a quorum queue drops a message
     * delivered 20 times, and every look at a parked purchase that puts it back (a reject with
     * requeue, a client that closes its channel) counts as one.
     */
    public static final int PARKING_DELIVERY_LIMIT = -1;

    /**
     * Default bound of a shard queue in ready messages ({@code platform.broker.shard-queue-max-length}):
     * docs/operations.md, "When the consumers fall behind", says why this much.
     */
    public static final long DEFAULT_SHARD_QUEUE_MAX_LENGTH = 100_000;

    /**
     * Default bound of a shard queue in bytes of ready message bodies, 256 MiB
     * ({@code platform.broker.shard-queue-max-length-bytes}).
     */
    public static final long DEFAULT_SHARD_QUEUE_MAX_LENGTH_BYTES = 256L * 1024 * 1024;

    /** The binding key (the weight, for {@code x-modulus-hash}) of each replicated shard. */
    static final String SHARD_WEIGHT = "1";

    private BrokerTopology() {
    }

    /**
     * The exchanges, their bindings, the dead-letter exchange with its parking queue, the store
     * query queue of each store partition and, in {@code replicated} mode, the shard queues with their bindings; a new
     * object on each call.
     */
    public static Declarables declarables(BrokerSettings settings) {
        boolean replicated = settings.topologyMode() == BrokerSettings.TopologyMode.REPLICATED;
        List<Declarable> declarables = new ArrayList<>();
        List<String> shardedExchanges = settings.shardedExchanges();
        for (String sharded : shardedExchanges) {
            declarables.add(new CustomExchange(sharded, Topology.SHARDING_EXCHANGE_TYPE, true, false));
        }
        declarables.add(new FanoutExchange(Topology.INGRESS_EXCHANGE, true, false));
        for (String sharded : shardedExchanges) {
            declarables.add(new Binding(sharded, Binding.DestinationType.EXCHANGE, Topology.INGRESS_EXCHANGE, "", null));
        }
        declarables.add(new FanoutExchange(Topology.DEAD_LETTER_EXCHANGE, true, false));
        declarables.add(durableQueue(Topology.PARKING_QUEUE, replicated, Map.of()));
        declarables.add(new Binding(Topology.PARKING_QUEUE, Binding.DestinationType.QUEUE, Topology.DEAD_LETTER_EXCHANGE, "", null));
        // Requests carry their own expiration: a stale request is dropped instead of being
        // answered to nobody. Durable only because RabbitMQ 4.3 refuses transient shared queues.
        // One query queue per store partition, its copies sharing it.
        for (String queries : settings.storeQueryQueues()) {
            declarables.add(durableQueue(queries, replicated, Map.of()));
        }
        if (replicated) {
            for (String sharded : shardedExchanges) {
                for (String shard : Topology.replicatedShards(sharded, settings.replicatedShards())) {
                    declarables.add(durableQueue(shard, true, Map.of(
                            "x-single-active-consumer", true,
                            "x-delivery-limit", REPLICATED_DELIVERY_LIMIT,
                            "x-dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE)));
                    declarables.add(new Binding(shard, Binding.DestinationType.QUEUE, sharded, SHARD_WEIGHT, null));
                }
            }
        }
        return new Declarables(declarables);
    }

    /**
     * What a service registers as a bean for Spring's {@code RabbitAdmin} to declare on every
     * connection: the {@linkplain #declarables(BrokerSettings) topology}, or nothing when the
     * service may not declare ({@code platform.broker.declare=false}; a refused declare would
     * close the connection's channel on every reconnect).
     */
    public static Declarables declaredByService(BrokerSettings settings) {
        return settings.declares() ? declarables(settings) : new Declarables();
    }

    /**
     * A durable queue; a quorum queue when {@code quorum}, its leaders spread over the nodes
     * ({@code balanced}; RabbitMQ 3.10's default puts every leader on the declaring client's node).
     */
    private static Queue durableQueue(String name, boolean quorum, Map<String, Object> arguments) {
        Map<String, Object> all = new LinkedHashMap<>(arguments);
        if (quorum) {
            all.put("x-queue-type", "quorum");
            all.put("x-queue-leader-locator", "balanced");
        }
        return new Queue(name, true, false, false, all);
    }

    /**
     * Declares {@link #declarables(BrokerSettings)} now, in order, through {@code admin}, so that
     * a failure is seen by the caller rather than only logged by a connection listener.
     *
     * @throws ShardingPluginMissingException if the broker does not know {@code x-modulus-hash}
     * @throws AmqpException                  for any other broker error (e.g. unreachable)
     */
    public static void declare(AmqpAdmin admin, BrokerSettings settings) {
        try {
            for (Declarable declarable : declarables(settings).getDeclarables()) {
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
     * Checks, without declaring anything, that what {@code user} works with exists: each queue of
     * {@link #declarables(BrokerSettings)} it may read and each exchange it may write to, by a
     * passive declare. So a least-privilege service can tell whether the deployment's set-up step
     * has run. A passive declare needs a right on its target (RabbitMQ 4.2.6 and 4.3 refuse it,
     * with {@code ACCESS_REFUSED}, to a user with none, as they refuse telling such a user whether
     * the name exists), so what the user has no right to is left to the services that have.
     *
     * @throws TopologyMissingException naming the first missing queue or exchange
     * @throws AmqpException            for a broker error (e.g. unreachable)
     */
    public static void verify(RabbitAdmin admin, BrokerSettings settings, String vhost, BrokerUsers user) {
        for (Declarable declarable : declarables(settings).getDeclarables()) {
            if (declarable instanceof Queue queue && user.mayRead(queue.getName()) && admin.getQueueInfo(queue.getName()) == null) {
                throw new TopologyMissingException("queue", queue.getName(), vhost);
            }
            if (declarable instanceof Exchange exchange && user.mayWrite(exchange.getName())
                    && !exchangeExists(admin, exchange.getName())) {
                throw new TopologyMissingException("exchange", exchange.getName(), vhost);
            }
        }
    }

    /** A passive declare of {@code exchange} on a channel of its own: false when the broker answers 404. */
    private static boolean exchangeExists(RabbitAdmin admin, String exchange) {
        try {
            admin.getRabbitTemplate().execute(channel -> channel.exchangeDeclarePassive(exchange));
            return true;
        } catch (AmqpException e) {
            if (causes(e).contains("NOT_FOUND")) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Sets the policies of {@code settings}' topology mode in {@code vhost}: the shard queues'
     * ({@link Topology#SHARD_QUEUES_POLICY}, {@link #shardQueuesDefinition}) on the shard queues of
     * every sharded exchange, and in the {@code sharded} mode the sharding policy
     * ({@code shardsPerNode} shard queues per node) on each sharded exchange, after which the
     * plugin creates the shard queues (asynchronously); in the {@code replicated} mode the parking
     * queue's ({@link Topology#PARKING_POLICY}). A policy rather than queue arguments, so that the
     * queues declared without them (by an earlier version, by the plugin, or imported from
     * definitions) take them too, and a changed bound applies to the queues as they are.
     */
    public static void applyPolicies(ManagementClient management, String vhost, BrokerSettings settings) {
        List<String> exchanges = settings.shardedExchanges().stream().map(BrokerTopology::quote).toList();
        String shardQueues;
        if (settings.topologyMode() == BrokerSettings.TopologyMode.REPLICATED) {
            applyParkingPolicy(management, vhost);
            // Topology.replicatedShardName: <exchange>.shard.<index>
            shardQueues = "^(" + String.join("|", exchanges) + ")\\.shard\\.[0-9]+$";
        } else {
            for (String exchange : settings.shardedExchanges()) {
                management.putPolicy(vhost, Topology.shardingPolicyName(exchange), "^" + quote(exchange) + "$", "exchanges",
                        10, Map.of("shards-per-node", settings.shardsPerNode(), "routing-key", "shard"));
            }
            shardQueues = "^" + Topology.shardQueuePrefix("(" + String.join("|", exchanges) + ")");
        }
        management.putPolicy(vhost, Topology.SHARD_QUEUES_POLICY, shardQueues, "queues", 10, shardQueuesDefinition(settings));
    }

    /**
     * The definition of the shard queues' policy: rejected messages go to the dead-letter
     * exchange, and a queue holding {@code shard-queue-max-length} ready messages or
     * {@code shard-queue-max-length-bytes} bytes of them refuses what is published to it
     * ({@code overflow: reject-publish}, which classic and quorum queues both take): the broker
     * nacks the publish, so purchase-api answers it {@code 503}, and every other queue the message
     * is routed to still takes it. A bound of 0 is none; with neither, the queues grow until a
     * broker alarm blocks every publisher.
     */
    public static Map<String, Object> shardQueuesDefinition(BrokerSettings settings) {
        Map<String, Object> definition = new LinkedHashMap<>();
        definition.put("dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE);
        if (settings.shardQueueMaxLength() > 0) {
            definition.put("max-length", settings.shardQueueMaxLength());
        }
        if (settings.shardQueueMaxLengthBytes() > 0) {
            definition.put("max-length-bytes", settings.shardQueueMaxLengthBytes());
        }
        if (definition.size() > 1) {
            definition.put("overflow", "reject-publish");
        }
        return definition;
    }

    /**
     * Sets the parking queue's policy ({@link Topology#PARKING_POLICY}): no delivery limit
     * ({@link #PARKING_DELIVERY_LIMIT}). A policy rather than a queue argument, so that a parking
     * queue declared without one (by an earlier version, or imported from its definitions) takes
     * it too. For the {@code replicated} mode, whose parking queue is a quorum queue; RabbitMQ
     * 4.0 or newer (3.x refuses a negative limit).
     */
    private static void applyParkingPolicy(ManagementClient management, String vhost) {
        management.putPolicy(vhost, Topology.PARKING_POLICY, "^" + quote(Topology.PARKING_QUEUE) + "$", "queues", 10,
                Map.of("delivery-limit", PARKING_DELIVERY_LIMIT));
    }

    /** {@code name} as a policy pattern that matches it literally (a copy group's exchange has a dot). */
    private static String quote(String name) {
        return name.replace(".", "\\.");
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

    /** A queue or exchange of the topology is missing where the service may not declare it itself. */
    public static final class TopologyMissingException extends IllegalStateException {
        public TopologyMissingException(String kind, String name, String vhost) {
            super(kind + " '" + name + "' does not exist in vhost '" + vhost + "' and this service does not declare "
                    + "(platform.broker.declare=false, a least-privilege broker user): run the deployment's broker "
                    + "set-up step (the definitions file in compose, the topology resources on Kubernetes), which "
                    + "declares the topology as a user that may");
        }
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
