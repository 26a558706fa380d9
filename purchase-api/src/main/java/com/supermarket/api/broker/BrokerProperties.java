package com.supermarket.api.broker;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the API watches the broker. Immutable. The connection itself is Spring Boot's
 * {@code spring.rabbitmq.*}; the topology settings shared by every service are the contract's
 * {@code BrokerSettings} under the same prefix.
 *
 * @param healthTimeout bound of the readiness check's broker round trip
 */
@ConfigurationProperties("api.broker")
record BrokerProperties(@DefaultValue("2s") Duration healthTimeout) {
}
