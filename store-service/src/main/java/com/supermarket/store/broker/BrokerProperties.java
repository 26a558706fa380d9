package com.supermarket.store.broker;

import java.net.URI;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How this service reaches and prepares the broker, beyond {@code spring.rabbitmq.*}.
 *
 * @param managementUrl  the management HTTP API, for policies and shard discovery
 * @param shardsPerNode  shard queues per broker node of each sharded exchange
 * @param managePolicies whether this service sets the sharding and dead-letter policies itself
 *                       (false when the deployment provides them)
 */
@ConfigurationProperties("broker")
public record BrokerProperties(URI managementUrl, int shardsPerNode, boolean managePolicies) {
}
