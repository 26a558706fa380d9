package com.supermarket.contract;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Declarables;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The broker beans every service shares, imported by each service's configuration: the shared
 * settings ({@code platform.broker.*}), the topology as a bean (so Spring's admin declares it
 * again on every new connection; nothing when the service may not declare,
 * {@code BROKER_DECLARE=false}), and the {@link BrokerSetup} that declares it once explicitly and
 * applies the policies (or only checks that the topology exists), run by each service until it
 * succeeds, so a service starts whether or not the broker is up.
 */
@Configuration(proxyBeanMethods = false)
public class BrokerBeans {

    @Bean
    public BrokerSettings brokerSettings(Environment environment) {
        return Binder.get(environment).bindOrCreate(BrokerSettings.PREFIX, BrokerSettings.class);
    }

    @Bean
    public Declarables brokerTopology(BrokerSettings settings) {
        return BrokerTopology.declaredByService(settings);
    }

    @Bean
    public BrokerSetup brokerSetup(BrokerSettings settings, AmqpAdmin admin, RabbitProperties rabbit) {
        return settings.setup(admin, rabbit.determineUsername(), rabbit.determinePassword(), rabbit.determineVirtualHost());
    }
}
