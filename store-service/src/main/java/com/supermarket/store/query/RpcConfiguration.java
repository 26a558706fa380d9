package com.supermarket.store.query;

import com.supermarket.contract.OwnConnection;
import org.springframework.amqp.rabbit.config.DirectRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.DirectRabbitListenerContainerFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionFactoryBeanConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The RPC listener's own AMQP connection ({@link OwnConnection}, named
 * {@code store-service store queries}): the shard consumers' deliveries, a whole backlog of them
 * after an outage, share the application's connection, its socket reader and its few consumer
 * threads, so on it a store query would wait behind batches of purchases being counted.
 */
@Configuration(proxyBeanMethods = false)
class RpcConfiguration {

    /** Holds the connection as a bean of its own type (a {@code ConnectionFactory} bean would replace Boot's), and closes it. */
    static final class RpcConnection implements DisposableBean {

        private final CachingConnectionFactory factory;

        RpcConnection(CachingConnectionFactory factory) {
            this.factory = factory;
        }

        @Override
        public void destroy() {
            factory.destroy();
        }
    }

    @Bean
    RpcConnection rpcConnection(RabbitConnectionFactoryBeanConfigurer connections, CachingConnectionFactoryConfigurer factories) {
        return new RpcConnection(OwnConnection.of(connections, factories, "store-service store queries"));
    }

    /** The {@code spring.rabbitmq.listener.direct} settings, on the RPC listener's own connection. */
    @Bean
    DirectRabbitListenerContainerFactory rpcListenerContainerFactory(DirectRabbitListenerContainerFactoryConfigurer configurer,
                                                                     RpcConnection connection) {
        DirectRabbitListenerContainerFactory factory = new DirectRabbitListenerContainerFactory();
        configurer.configure(factory, connection.factory);
        return factory;
    }
}
