package com.supermarket.api.broker;

import com.supermarket.contract.BrokerBeans;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.amqp.autoconfigure.ConnectionFactoryCustomizer;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The purchase publishing template over Spring Boot's pooled {@link CachingConnectionFactory}
 * (mandatory, confirms correlated per message; confirms and returns are switched on for the
 * factory in {@code application.yml}), and bounds on the AMQP client's blocking calls; the
 * platform's shared broker beans (settings, topology, set-up) come from {@link BrokerBeans}.
 */
@Configuration(proxyBeanMethods = false)
@Import(BrokerBeans.class)
class BrokerConfiguration {

    private static final Logger log = LoggerFactory.getLogger(BrokerConfiguration.class);

    /**
     * Bounds on the AMQP client's blocking calls, so that a frozen link never holds a request
     * or a health check for the client's defaults (10 s handshake, 10 min channel RPC).
     *
     * @param handshakeTimeout  AMQP handshake ({@code RABBITMQ_HANDSHAKE_TIMEOUT})
     * @param channelRpcTimeout any synchronous channel call ({@code RABBITMQ_CHANNEL_RPC_TIMEOUT})
     */
    @ConfigurationProperties("platform.broker.client")
    record ClientTimeouts(@DefaultValue("5s") Duration handshakeTimeout, @DefaultValue("5s") Duration channelRpcTimeout) {
    }

    @Bean
    ConnectionFactoryCustomizer boundedClientCalls(ClientTimeouts timeouts) {
        return factory -> {
            factory.setHandshakeTimeout((int) timeouts.handshakeTimeout().toMillis());
            factory.setChannelRpcTimeout((int) timeouts.channelRpcTimeout().toMillis());
        };
    }

    @Bean
    RabbitTemplate publishTemplate(CachingConnectionFactory connectionFactory, BlockedConnectionTracker blocked) {
        connectionFactory.addConnectionListener(new ConnectionListener() {
            @Override
            public void onCreate(Connection connection) {
                // nothing to do: a fresh connection is not blocked
            }

            @Override
            public void onClose(Connection connection) {
                blocked.connectionClosed();
            }
        });
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        // Mandatory: an unroutable purchase comes back as a return (then a 503), not silently dropped.
        template.setMandatory(true);
        template.setReturnsCallback(returned -> log.debug("returned: {} {}", returned.getReplyCode(), returned.getReplyText()));
        return template;
    }
}
