package com.supermarket.broker;

import com.supermarket.contract.IdRanges;
import java.time.Duration;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.boot.amqp.autoconfigure.ConnectionFactoryCustomizer;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The broker beans every service shares, imported by each service's configuration: the id ranges
 * ({@link IdRanges}), the shared settings ({@code platform.broker.*}), bounds on the AMQP client's blocking calls
 * ({@code platform.broker.client.*}), the topology as a bean (so Spring's admin declares it
 * again on every new connection; nothing when the service may not declare,
 * {@code BROKER_DECLARE=false}), and the {@link BrokerSetup} that declares it once explicitly and
 * applies the policies (or only checks that what the service works with exists), run by each
 * service until it succeeds, so a service starts whether or not the broker is up. Each service
 * names its broker user's rights with a {@link BrokerUsers} bean.
 */
@Configuration(proxyBeanMethods = false)
public class BrokerBeans {

    /** The id ranges every service agrees on ({@code platform.max-stores}, {@code platform.max-item-id}). */
    @Bean
    public IdRanges idRanges(Environment environment) {
        return Binder.get(environment).bindOrCreate(IdRanges.PREFIX, IdRanges.class);
    }

    @Bean
    public BrokerSettings brokerSettings(Environment environment) {
        return Binder.get(environment).bindOrCreate(BrokerSettings.PREFIX, BrokerSettings.class);
    }

    /**
     * Bounds on the AMQP client's blocking calls, so that a frozen link, or a connection the
     * broker has stopped reading from (a memory or disk alarm blocks every connection that
     * publishes), never holds a thread for the client's defaults (10 s handshake, 10 min channel
     * round trip).
     *
     * @param handshakeTimeout  AMQP handshake ({@code RABBITMQ_HANDSHAKE_TIMEOUT})
     * @param channelRpcTimeout any synchronous channel call, e.g. opening a channel
     *                          ({@code RABBITMQ_CHANNEL_RPC_TIMEOUT})
     */
    public record ClientTimeouts(@DefaultValue("5s") Duration handshakeTimeout, @DefaultValue("5s") Duration channelRpcTimeout) {

        /** The configuration prefix of these settings. */
        public static final String PREFIX = BrokerSettings.PREFIX + ".client";
    }

    @Bean
    public ConnectionFactoryCustomizer boundedClientCalls(Environment environment) {
        ClientTimeouts timeouts = Binder.get(environment).bindOrCreate(ClientTimeouts.PREFIX, ClientTimeouts.class);
        return factory -> {
            factory.setHandshakeTimeout((int) timeouts.handshakeTimeout().toMillis());
            factory.setChannelRpcTimeout((int) timeouts.channelRpcTimeout().toMillis());
        };
    }

    @Bean
    public Declarables brokerTopology(BrokerSettings settings) {
        return BrokerTopology.declaredByService(settings);
    }

    /**
     * The set-up, over an admin of its own on the service's connection factory (Spring Boot's
     * {@code amqpAdmin} is typed {@code AmqpAdmin}, which cannot declare an exchange passively).
     */
    @Bean
    public BrokerSetup brokerSetup(BrokerSettings settings, ConnectionFactory connectionFactory, RabbitProperties rabbit,
                                   BrokerUsers user) {
        return settings.setup(new RabbitAdmin(connectionFactory), rabbit.determineUsername(), rabbit.determinePassword(),
                rabbit.determineVirtualHost(), user);
    }
}
