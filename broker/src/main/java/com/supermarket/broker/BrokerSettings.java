package com.supermarket.broker;

import com.supermarket.contract.Topology;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.boot.context.properties.bind.ConstructorBinding;

/**
 * The broker settings every service shares, under one prefix, {@value #PREFIX} (environment:
 * {@code RABBITMQ_MANAGEMENT_URL}, {@code BROKER_SHARDS_PER_NODE}, {@code BROKER_MANAGE_POLICIES},
 * {@code BROKER_DISCOVERY_INTERVAL}, {@code BROKER_RETRY_INTERVAL}, {@code BROKER_TOPOLOGY_MODE},
 * {@code BROKER_REPLICATED_SHARDS}, {@code BROKER_DECLARE}, {@code STORE_PARTITIONS}, {@code STORE_COPIES},
 * {@code BROKER_SHARD_QUEUE_MAX_LENGTH}, {@code BROKER_SHARD_QUEUE_MAX_LENGTH_BYTES}); the connection itself is Spring Boot's
 * {@code spring.rabbitmq.*} (a list of nodes in {@code spring.rabbitmq.addresses}). A service binds this record from its environment and
 * builds its {@link BrokerSetup} and {@link ShardConsumers} from it. Immutable.
 *
 * @param managementUrl     the management HTTP API (policies, shard discovery); in the
 *                          {@code replicated} mode only for the parking queue's policy
 * @param shardsPerNode     shard queues per broker node of each sharded exchange (the policy;
 *                          {@code sharded} mode)
 * @param managePolicies    whether the services set the policies (the shard queues' one, with
 *                          the sharding ones in the {@code sharded} mode or the parking queue's in
 *                          the {@code replicated} mode; false when the deployment provides them)
 * @param discoveryInterval how often the shard queues are listed again once consuming (new
 *                          broker nodes); unused by a service that consumes no shards
 * @param retryInterval     how often an unprepared broker (unreachable, no plugin, no shard
 *                          queue yet) is tried again at startup
 * @param topologyMode      how the sharded exchanges' queues are made; {@code sharded} when unset
 * @param replicatedShards  quorum queues per sharded exchange in the {@code replicated} mode;
 *                          {@value BrokerTopology#DEFAULT_REPLICATED_SHARDS} when unset (0). Every
 *                          service of a vhost must agree on it: a queue no service consumes would
 *                          still receive its share of the stores
 * @param declare           whether the service declares the topology (and, with
 *                          {@code managePolicies}, sets the policies) itself; true when unset.
 *                          False for a service running as a least-privilege broker user, which
 *                          may not declare (RabbitMQ asks for configure rights even to re-declare
 *                          what exists): it then only checks, passively, that the queues of the
 *                          topology exist, and stays not-ready until the deployment's set-up
 *                          step has made them
 * @param storePartitions   how many partitions store-service's stores are split into
 *                          ({@link StorePartition}); 1 when unset (0). purchase-api asks each
 *                          partition on its own query queue, declared with the topology, and
 *                          store-service's partitions split the {@code storeX} shard queues, so
 *                          the shard count must be a multiple of it. Every service of a vhost
 *                          must agree on it
 * @param storeCopies       how many independent copies of every store partition run; 1 when
 *                          unset (0). Copy group {@code c} consumes its own sharded exchange,
 *                          {@link Topology#storeExchange(int)}, bound to the ingress fanout, and
 *                          the copies of a partition share its query queue. Every service of a
 *                          vhost must agree on it: the topology declares one store exchange per
 *                          copy group
 * @param shardQueueMaxLength      most ready messages in one shard queue, 0 for no such bound;
 *                                 with {@code shardQueueMaxLengthBytes}, the shard queues'
 *                                 policy ({@link BrokerTopology#shardQueuesDefinition}): a
 *                                 publish to a full shard queue is nacked, and purchase-api
 *                                 answers it {@code 503}
 * @param shardQueueMaxLengthBytes most bytes of ready message bodies in one shard queue, 0 for
 *                                 no such bound
 */
public record BrokerSettings(URI managementUrl, int shardsPerNode, boolean managePolicies, Duration discoveryInterval,
                             Duration retryInterval, TopologyMode topologyMode, int replicatedShards, Boolean declare,
                             int storePartitions, int storeCopies, long shardQueueMaxLength, long shardQueueMaxLengthBytes) {

    /** The configuration prefix of these settings. */
    public static final String PREFIX = "platform.broker";

    // The binder's constructor: the record has others, for the settings before the shard queues' bound.
    @ConstructorBinding
    public BrokerSettings {
        if (managementUrl == null || shardsPerNode < 1 || retryInterval == null || !retryInterval.isPositive()
                || replicatedShards < 0 || storePartitions < 0 || storeCopies < 0 || shardQueueMaxLength < 0
                || shardQueueMaxLengthBytes < 0) {
            throw new IllegalArgumentException(PREFIX + ".management-url, .shards-per-node (>= 1) and .retry-interval (> 0) "
                    + "are required, .replicated-shards, .store-partitions and .store-copies must not be negative, nor "
                    + ".shard-queue-max-length and .shard-queue-max-length-bytes: " + managementUrl + ", " + shardsPerNode + ", "
                    + retryInterval + ", " + replicatedShards + ", " + storePartitions + ", " + storeCopies + ", "
                    + shardQueueMaxLength + ", " + shardQueueMaxLengthBytes);
        }
        topologyMode = topologyMode == null ? TopologyMode.SHARDED : topologyMode;
        replicatedShards = replicatedShards == 0 ? BrokerTopology.DEFAULT_REPLICATED_SHARDS : replicatedShards;
        declare = declare == null || declare;
        storePartitions = storePartitions == 0 ? 1 : storePartitions;
        storeCopies = storeCopies == 0 ? 1 : storeCopies;
    }

    /** The settings with the shard queues' default bound ({@link BrokerTopology#DEFAULT_SHARD_QUEUE_MAX_LENGTH} and bytes). */
    public BrokerSettings(URI managementUrl, int shardsPerNode, boolean managePolicies, Duration discoveryInterval,
                          Duration retryInterval, TopologyMode topologyMode, int replicatedShards, Boolean declare,
                          int storePartitions, int storeCopies) {
        this(managementUrl, shardsPerNode, managePolicies, discoveryInterval, retryInterval, topologyMode, replicatedShards,
                declare, storePartitions, storeCopies, BrokerTopology.DEFAULT_SHARD_QUEUE_MAX_LENGTH,
                BrokerTopology.DEFAULT_SHARD_QUEUE_MAX_LENGTH_BYTES);
    }

    /** The settings of one store copy group, as before copies: {@code storeCopies} 1. */
    public BrokerSettings(URI managementUrl, int shardsPerNode, boolean managePolicies, Duration discoveryInterval,
                          Duration retryInterval, TopologyMode topologyMode, int replicatedShards, Boolean declare,
                          int storePartitions) {
        this(managementUrl, shardsPerNode, managePolicies, discoveryInterval, retryInterval, topologyMode, replicatedShards,
                declare, storePartitions, 1);
    }

    /** The settings of one store partition, as before partitions: {@code storePartitions} 1. */
    public BrokerSettings(URI managementUrl, int shardsPerNode, boolean managePolicies, Duration discoveryInterval,
                          Duration retryInterval, TopologyMode topologyMode, int replicatedShards, Boolean declare) {
        this(managementUrl, shardsPerNode, managePolicies, discoveryInterval, retryInterval, topologyMode, replicatedShards,
                declare, 1);
    }

    /** The sharded exchange of every store copy group, copy by copy ({@link Topology#storeExchange(int)}). */
    public List<String> storeExchanges() {
        List<String> exchanges = new ArrayList<>(storeCopies);
        for (int copy = 0; copy < storeCopies; copy++) {
            exchanges.add(Topology.storeExchange(copy));
        }
        return exchanges;
    }

    /**
     * Every sharded exchange: {@link Topology#PURCHASE_EXCHANGE} and the store exchange of each
     * copy group; {@link Topology#SHARDED_EXCHANGES} with one copy.
     */
    public List<String> shardedExchanges() {
        List<String> exchanges = new ArrayList<>(storeCopies + 1);
        exchanges.add(Topology.PURCHASE_EXCHANGE);
        exchanges.addAll(storeExchanges());
        return exchanges;
    }

    /** The query queue of every store partition, partition by partition. */
    public List<String> storeQueryQueues() {
        List<String> queues = new ArrayList<>(storePartitions);
        for (int partition = 0; partition < storePartitions; partition++) {
            queues.add(Topology.storeQueryQueue(partition, storePartitions));
        }
        return queues;
    }

    /** These settings with the shard queues bounded at {@code maxLength} messages and {@code maxLengthBytes} bytes (0: no such bound). */
    public BrokerSettings withShardQueueBound(long maxLength, long maxLengthBytes) {
        return new BrokerSettings(managementUrl, shardsPerNode, managePolicies, discoveryInterval, retryInterval, topologyMode,
                replicatedShards, declare, storePartitions, storeCopies, maxLength, maxLengthBytes);
    }

    /** Whether this service declares the topology itself ({@code platform.broker.declare}). */
    public boolean declares() {
        return declare;
    }

    /**
     * How the queues behind the sharded exchanges are made ({@code platform.broker.topology-mode},
     * {@code BROKER_TOPOLOGY_MODE}).
     */
    public enum TopologyMode {
        /**
         * The {@code rabbitmq_sharding} plugin's classic queues, {@code shardsPerNode} per node,
         * made by a policy and found over the management API. Not replicated: a node's shards and
         * the purchases in them are out of reach while it is down, lost with its disk.
         */
        SHARDED,
        /**
         * {@code replicatedShards} quorum queues per sharded exchange, declared by the platform
         * with fixed names and bound to the {@code x-modulus-hash} exchange: a message is stored
         * on a majority of nodes before it is confirmed, and a queue keeps working while a
         * majority of its nodes is up. Its policies, set over the management API: the parking
         * queue's unlimited deliveries and the shard queues' bound ({@link BrokerTopology#applyPolicies}).
         */
        REPLICATED
    }

    /**
     * The runner that declares the topology and applies the policies in {@code vhost}, or checks
     * that what {@code user}'s rights reach exists.
     */
    public BrokerSetup setup(RabbitAdmin admin, String username, String password, String vhost, BrokerUsers user) {
        return new BrokerSetup(admin, new ManagementClient(managementUrl, username, password),
                vhost == null || vhost.isBlank() ? "/" : vhost, this, user);
    }

    /** How to consume shard queues with these intervals. */
    public ShardConsumers.Settings consumers(int consumersPerShard, int prefetch) {
        return new ShardConsumers.Settings(consumersPerShard, prefetch, discoveryInterval, retryInterval);
    }
}
