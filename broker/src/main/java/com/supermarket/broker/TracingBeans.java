package com.supermarket.broker;

import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Tracing as every service has it, imported by each service's configuration: Spring Boot's
 * OpenTelemetry tracer when {@value MessageTracing#ENABLED_PROPERTY} is true, and
 * {@link MessageTracing} for the batched messages. Off (false), the tracer and the propagator are
 * Micrometer's no-ops instead of Boot's OpenTelemetry bridge, so the HTTP and messaging paths
 * make no spans, read no trace headers and export nothing.
 */
@Configuration(proxyBeanMethods = false)
public class TracingBeans {

    @Bean
    public MessageTracing messageTracing(Tracer tracer, Propagator propagator, Environment environment) {
        return new MessageTracing(tracer, propagator,
                environment.getProperty(MessageTracing.ENABLED_PROPERTY, Boolean.class, true));
    }

    /** Tracing off: no-ops before Boot's auto-configuration makes its OpenTelemetry bridge. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = MessageTracing.ENABLED_PROPERTY, havingValue = false)
    static class Off {

        @Bean
        Tracer noopTracer() {
            return Tracer.NOOP;
        }

        @Bean
        Propagator noopPropagator() {
            return Propagator.NOOP;
        }
    }
}
