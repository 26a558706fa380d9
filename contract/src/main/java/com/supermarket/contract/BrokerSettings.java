package com.supermarket.contract;

import java.net.URI;
import java.time.Duration;
import org.springframework.amqp.core.AmqpAdmin;

/**
 * The broker settings every service shares, under one prefix, {@value #PREFIX} (environment:
 * {@code RABBITMQ_MANAGEMENT_URL}, {@code BROKER_SHARDS_PER_NODE}, {@code BROKER_MANAGE_POLICIES},
 * {@code BROKER_DISCOVERY_INTERVAL}, {@code BROKER_RETRY_INTERVAL}); the connection itself is
 * Spring Boot's {@code spring.rabbitmq.*}. A service binds this record from its environment and
 * builds its {@link BrokerSetup} and {@link ShardConsumers} from it. Immutable.
 *
 * @param managementUrl     the management HTTP API (policies, shard discovery)
 * @param shardsPerNode     shard queues per broker node of each sharded exchange (the policy)
 * @param managePolicies    whether the services set the sharding and dead-letter policies (false
 *                          when the deployment provides them)
 * @param discoveryInterval how often the shard queues are listed again once consuming (new
 *                          broker nodes); unused by a service that consumes no shards
 * @param retryInterval     how often an unprepared broker (unreachable, no plugin, no shard
 *                          queue yet) is tried again at startup
 */
public record BrokerSettings(URI managementUrl, int shardsPerNode, boolean managePolicies, Duration discoveryInterval,
                             Duration retryInterval) {

    /** The configuration prefix of these settings. */
    public static final String PREFIX = "platform.broker";

    public BrokerSettings {
        if (managementUrl == null || shardsPerNode < 1 || retryInterval == null || !retryInterval.isPositive()) {
            throw new IllegalArgumentException(PREFIX + ".management-url, .shards-per-node (>= 1) and .retry-interval (> 0) "
                    + "are required: " + managementUrl + ", " + shardsPerNode + ", " + retryInterval);
        }
    }

    /** The runner that declares the topology and applies the policies in {@code vhost}. */
    public BrokerSetup setup(AmqpAdmin admin, String username, String password, String vhost) {
        return new BrokerSetup(admin, new ManagementClient(managementUrl, username, password),
                vhost == null || vhost.isBlank() ? "/" : vhost, this);
    }

    /** How to consume shard queues with these intervals. */
    public ShardConsumers.Settings consumers(int consumersPerShard, int prefetch) {
        return new ShardConsumers.Settings(consumersPerShard, prefetch, discoveryInterval, retryInterval);
    }
}
