package com.supermarket.broker;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.DefaultPropertiesPropertySource;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;

/**
 * The defaults of the settings every service shares ({@value #RESOURCE}: the id ranges,
 * {@code platform.max-stores} and {@code platform.max-item-id}, and the
 * {@value BrokerSettings#PREFIX} block, with their environment variables), written once for the
 * three services. Added below every other property source (only Boot's {@code defaultProperties}
 * lie lower), so a service's {@code application.yml}, a profile, a test's properties or the
 * environment override each of them. Registered in {@code META-INF/spring.factories}; stateless.
 */
public class PlatformDefaults implements EnvironmentPostProcessor {

    static final String RESOURCE = "com/supermarket/broker/platform-defaults.yml";
    static final String SOURCE_NAME = "platformDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.getPropertySources().contains(SOURCE_NAME)) {
            return;
        }
        try {
            for (PropertySource<?> source : new YamlPropertySourceLoader().load(SOURCE_NAME, new ClassPathResource(RESOURCE))) {
                environment.getPropertySources().addLast(source);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
        DefaultPropertiesPropertySource.moveToEnd(environment);
    }
}
