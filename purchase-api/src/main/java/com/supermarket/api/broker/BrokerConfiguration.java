package com.supermarket.api.broker;

import com.supermarket.broker.BrokerBeans;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.TracingBeans;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The purchase publishing template over Spring Boot's pooled {@link CachingConnectionFactory}
 * (mandatory, confirms correlated per message; confirms and returns are switched on for the
 * factory in {@code application.yml}); the platform's shared broker beans (settings, bounds on
 * the AMQP client's blocking calls, topology, set-up) come from {@link BrokerBeans}.
 */
@Configuration(proxyBeanMethods = false)
@Import({BrokerBeans.class, TracingBeans.class})
class BrokerConfiguration {

    private static final Logger log = LoggerFactory.getLogger(BrokerConfiguration.class);

    /** This service's broker user's rights: what it checks exists when it may not declare ({@link BrokerBeans}). */
    @Bean
    BrokerUsers brokerUser() {
        return BrokerUsers.PURCHASE_API;
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
