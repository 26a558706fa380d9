package com.supermarket.contract;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitConnectionFactoryBean;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionFactoryBeanConfigurer;

/**
 * An AMQP connection of a service's own beside the application's, for traffic that must not
 * share the application's connection: its socket reader and its pool of consumer threads
 * (purchase-api's store queries beside its publishing; store-service's RPC answers beside its
 * shard consumers).
 */
public final class OwnConnection {

    private OwnConnection() {
    }

    /**
     * A connection made as Spring Boot makes the application's: every address of
     * {@code RABBITMQ_ADDRESSES} (a connection made from the application's underlying factory
     * would know only the first, and never fail over), the credentials, vhost and timeouts;
     * named {@code name} in the broker's connection list; neither confirmed nor returned. Not a
     * bean, which would replace Boot's own connection factory: the caller destroys it.
     *
     * @param connections Boot's configurers of the application's connection
     */
    public static CachingConnectionFactory of(RabbitConnectionFactoryBeanConfigurer connections,
                                              CachingConnectionFactoryConfigurer factories, String name) {
        RabbitConnectionFactoryBean connection = new RabbitConnectionFactoryBean();
        connections.configure(connection);
        CachingConnectionFactory factory;
        try {
            connection.afterPropertiesSet();
            factory = new CachingConnectionFactory(connection.getObject());
        } catch (Exception e) {
            throw new IllegalStateException("could not configure the connection '" + name + "'", e);
        }
        factories.configure(factory);
        factory.setConnectionNameStrategy(ignored -> name);
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.NONE);
        factory.setPublisherReturns(false);
        return factory;
    }
}
