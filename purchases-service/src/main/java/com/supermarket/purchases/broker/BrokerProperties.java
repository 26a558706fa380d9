package com.supermarket.purchases.broker;

import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Broker settings beyond Spring's {@code spring.rabbitmq.*}.
 *
 * @param managementUrl     the RabbitMQ management API (policies, shard queue discovery)
 * @param shardsPerNode     shard queues per broker node, used when this service applies the policies
 * @param managePolicies    whether this service applies the sharding and dead-letter policies itself
 *                          (false when the deployment provides them)
 * @param discoveryInterval how often the shard queues are listed again, to pick up new broker nodes
 * @param shardWait         how long startup waits for the first shard queue to appear
 */
@ConfigurationProperties("broker")
public record BrokerProperties(
        @DefaultValue("http://localhost:15672") URI managementUrl,
        @DefaultValue("4") int shardsPerNode,
        @DefaultValue("true") boolean managePolicies,
        @DefaultValue("30s") Duration discoveryInterval,
        @DefaultValue("60s") Duration shardWait) {
}
