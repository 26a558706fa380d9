package com.supermarket.store.broker;

import com.supermarket.contract.BrokerSettings;
import com.supermarket.contract.BrokerSetup;
import com.supermarket.contract.BrokerTopology;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Declarables;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The platform's broker topology and the shared broker settings ({@code platform.broker.*}).
 * The topology is a bean, so Spring's admin declares it again on every new connection; the
 * {@link BrokerSetup} declares it once explicitly and applies the policies (or, with
 * {@code BROKER_DECLARE=false}, only checks that it exists), retried by the shard
 * consumers until it succeeds, so the service starts whether or not the broker is up.
 */
@Configuration(proxyBeanMethods = false)
class BrokerConfiguration {

    @Bean
    BrokerSettings brokerSettings(Environment environment) {
        return Binder.get(environment).bindOrCreate(BrokerSettings.PREFIX, BrokerSettings.class);
    }

    @Bean
    Declarables brokerTopology(BrokerSettings settings) {
        return BrokerTopology.declaredByService(settings);
    }

    @Bean
    BrokerSetup brokerSetup(BrokerSettings settings, AmqpAdmin admin, RabbitProperties rabbit) {
        return settings.setup(admin, rabbit.determineUsername(), rabbit.determinePassword(), rabbit.determineVirtualHost());
    }
}
