package com.supermarket.store.broker;

import com.supermarket.broker.BrokerBeans;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.Parking;
import com.supermarket.broker.TracingBeans;
import org.springframework.amqp.rabbit.config.DirectRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.amqp.autoconfigure.DirectRabbitListenerContainerFactoryConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The platform's shared broker beans (settings, topology, set-up: see {@link BrokerBeans}), and
 * the two connections: the shard consumers consume on Spring Boot's connection and never publish
 * on it; whatever publishes (the RPC server's replies, parking) is on its publisher connection.
 * Under a memory or disk alarm the broker stops reading from a connection that publishes, acks
 * included, so a reply or a park on the consumers' connection would stop every shard from
 * draining (and never end when the alarm comes from the shards' own backlog).
 */
@Configuration(proxyBeanMethods = false)
@Import({BrokerBeans.class, TracingBeans.class})
class BrokerConfiguration {

    /** This service's broker user's rights: what it checks exists when it may not declare ({@link BrokerBeans}). */
    @Bean
    BrokerUsers brokerUser() {
        return BrokerUsers.STORE_SERVICE;
    }

    /**
     * The container factory of the RPC listener (Boot's settings, {@code spring.rabbitmq.listener.direct}),
     * on the publisher connection: a request is consumed, answered and acknowledged there.
     */
    @Bean
    DirectRabbitListenerContainerFactory rabbitListenerContainerFactory(DirectRabbitListenerContainerFactoryConfigurer configurer,
                                                                        CachingConnectionFactory connectionFactory) {
        DirectRabbitListenerContainerFactory factory = new DirectRabbitListenerContainerFactory();
        configurer.configure(factory, connectionFactory.getPublisherConnectionFactory());
        return factory;
    }

    /** Parks poison purchases on the publisher connection. */
    @Bean
    Parking parking(CachingConnectionFactory connectionFactory) {
        return new Parking(connectionFactory.getPublisherConnectionFactory());
    }
}
