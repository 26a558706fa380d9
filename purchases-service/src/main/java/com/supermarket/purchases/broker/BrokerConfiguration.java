package com.supermarket.purchases.broker;

import com.supermarket.broker.BrokerBeans;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.Parking;
import com.supermarket.broker.TracingBeans;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The platform's shared broker beans (settings, topology, set-up: see {@link BrokerBeans}), and
 * parking on Spring Boot's publisher connection: the shard consumers consume on its main
 * connection and never publish on it, since under a memory or disk alarm the broker stops
 * reading from a connection that publishes, acks included.
 */
@Configuration(proxyBeanMethods = false)
@Import({BrokerBeans.class, TracingBeans.class})
class BrokerConfiguration {

    /** This service's broker user's rights: what it checks exists when it may not declare ({@link BrokerBeans}). */
    @Bean
    BrokerUsers brokerUser() {
        return BrokerUsers.PURCHASES_SERVICE;
    }

    /** Parks poison purchases, and those the store refuses for good, on the publisher connection. */
    @Bean
    Parking parking(CachingConnectionFactory connectionFactory) {
        return new Parking(connectionFactory.getPublisherConnectionFactory());
    }
}
