package com.supermarket.api.broker;

import com.supermarket.contract.BrokerTopology;
import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the API sets up and watches the broker. Immutable. The connection itself is Spring
 * Boot's {@code spring.rabbitmq.*}.
 *
 * @param shardsPerNode       shard queues per node for each sharded exchange ({@code BROKER_SHARDS_PER_NODE})
 * @param managePolicies      apply the sharding and dead-letter policies at startup; false when
 *                            the deployment provides them ({@code BROKER_MANAGE_POLICIES})
 * @param managementUrl       the management HTTP API ({@code RABBITMQ_MANAGEMENT_URL})
 * @param healthTimeout       bound of the readiness check's broker round trip ({@code BROKER_HEALTH_TIMEOUT})
 */
@ConfigurationProperties("platform.broker")
record BrokerProperties(@DefaultValue("" + BrokerTopology.DEFAULT_SHARDS_PER_NODE) int shardsPerNode,
                        @DefaultValue("true") boolean managePolicies,
                        @DefaultValue("http://localhost:15672") URI managementUrl,
                        @DefaultValue("2s") Duration healthTimeout) {
}
