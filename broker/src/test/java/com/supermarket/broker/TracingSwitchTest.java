package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

class TracingSwitchTest {

    @Test
    void offLeavesBootsTracingAutoConfigurationOutKeepingWhatAProfileExcludes() {
        StandardEnvironment environment = environment("false");
        environment.getPropertySources().addLast(new MapPropertySource("profile",
                Map.of("spring.autoconfigure.exclude[0]", "com.example.DataSourceAutoConfiguration")));

        new TracingSwitch().postProcessEnvironment(environment, new SpringApplication());

        assertThat(excluded(environment)).containsExactlyElementsOf(concat(List.of("com.example.DataSourceAutoConfiguration"),
                TracingSwitch.TRACING_AUTO_CONFIGURATIONS));
    }

    @Test
    void onOrUnsetLeavesTheAutoConfigurationAlone() {
        for (String enabled : new String[] {"true", null}) {
            StandardEnvironment environment = environment(enabled);

            new TracingSwitch().postProcessEnvironment(environment, new SpringApplication());

            assertThat(excluded(environment)).as("enabled=%s", enabled).isEmpty();
        }
    }

    @Test
    void leavesOutAutoConfigurationsThatExistAndIsRegistered() throws IOException {
        List<String> candidates = new ArrayList<>();
        ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).forEach(candidates::add);
        assertThat(candidates).as("a name Boot does not know would be left out silently")
                .containsAll(TracingSwitch.TRACING_AUTO_CONFIGURATIONS);
        List<String> factories = new ArrayList<>();
        for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring.factories"))) {
            try (InputStream in = url.openStream()) {
                factories.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        assertThat(factories).anySatisfy(file -> assertThat(file)
                .contains("org.springframework.boot.EnvironmentPostProcessor=\\\n" + TracingSwitch.class.getName()));
    }

    private static StandardEnvironment environment(String enabled) {
        StandardEnvironment environment = new StandardEnvironment();
        if (enabled != null) {
            environment.getPropertySources().addFirst(new MapPropertySource("test", Map.of(MessageTracing.ENABLED_PROPERTY, enabled)));
        }
        return environment;
    }

    private static List<String> excluded(StandardEnvironment environment) {
        return Binder.get(environment).bind("spring.autoconfigure.exclude", Bindable.listOf(String.class)).orElse(List.of());
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}
