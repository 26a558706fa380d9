package com.supermarket.api.auth;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The framework-free parts of till authentication as beans, only when {@code API_AUTH_ENABLED}
 * is true: with it off nothing is registered and a request pays nothing.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "api.auth.enabled", havingValue = "true")
class TillAuthConfiguration {

    @Bean(destroyMethod = "close")
    TillKeys tillKeys(TillAuthProperties properties) {
        return new TillKeys(properties.keysFile()).startReloading(properties.reloadInterval());
    }

    @Bean
    TillAuthenticator tillAuthenticator(TillKeys keys, TillAuthProperties properties, MeterRegistry registry) {
        return new TillAuthenticator(keys, registry, properties.refusalLogLinesPerSecond(), System::currentTimeMillis);
    }
}
