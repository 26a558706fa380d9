package com.supermarket.broker;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Tracing off ({@value MessageTracing#ENABLED_PROPERTY} false, the services' default) leaves
 * Spring Boot's tracing auto-configuration out altogether, so that an observation (every HTTP
 * request) gets no tracing handler and a histogram no exemplar lookup: the services then do per
 * request what they did before tracing existed. (Boot's own switch only stops export and
 * propagation; its tracer would still make a span per request.) {@link TracingBeans} supplies
 * the no-op tracer and propagator {@link MessageTracing} needs then. Registered in
 * {@code META-INF/spring.factories}; stateless.
 */
public class TracingSwitch implements EnvironmentPostProcessor {

    static final List<String> TRACING_AUTO_CONFIGURATIONS = List.of(
            "org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.autoconfigure.prometheus.PrometheusExemplarsAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.otlp.OtlpTracingAutoConfiguration");
    private static final String EXCLUDE = "spring.autoconfigure.exclude";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.getProperty(MessageTracing.ENABLED_PROPERTY, Boolean.class, true)) {
            return;
        }
        // Bound, not read: a profile may list its own exclusions (purchases-service's dynamodb).
        List<String> excluded = new ArrayList<>(Binder.get(environment).bind(EXCLUDE, Bindable.listOf(String.class))
                .orElse(List.of()));
        excluded.addAll(TRACING_AUTO_CONFIGURATIONS);
        environment.getPropertySources().addFirst(new MapPropertySource("tracingOff",
                Map.of(EXCLUDE, String.join(",", excluded))));
    }
}
