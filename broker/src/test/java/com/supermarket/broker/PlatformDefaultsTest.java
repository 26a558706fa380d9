package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.BrokerSettings.TopologyMode;
import com.supermarket.contract.IdRanges;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

class PlatformDefaultsTest {

    @Test
    void aServiceWithoutBrokerSettingsOfItsOwnGetsTheSharedDefaults() {
        StandardEnvironment environment = environment(Map.of(), Map.of());

        BrokerSettings settings = bind(environment);

        assertThat(settings).isEqualTo(new BrokerSettings(URI.create("http://localhost:15672"), 4, true, Duration.ofSeconds(10),
                Duration.ofSeconds(2), TopologyMode.SHARDED, 8, true, 1, 1));
        assertThat(Binder.get(environment).bindOrCreate(BrokerBeans.ClientTimeouts.PREFIX, BrokerBeans.ClientTimeouts.class))
                .isEqualTo(new BrokerBeans.ClientTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5)));
        assertThat(new BrokerBeans().idRanges(environment)).isEqualTo(new IdRanges(1024, 100_000));
    }

    @Test
    void theEnvironmentVariablesAndTheServicesOwnFileOverrideTheDefaults() {
        StandardEnvironment environment = environment(
                Map.of("BROKER_TOPOLOGY_MODE", "replicated", "STORE_PARTITIONS", "2", "PLATFORM_BROKER_STORE_COPIES", "3",
                        "PLATFORM_MAX_STORES", "64"),
                Map.of("platform.broker.replicated-shards", "12"));

        BrokerSettings settings = bind(environment);

        assertThat(settings.topologyMode()).isEqualTo(TopologyMode.REPLICATED);
        assertThat(settings.storePartitions()).isEqualTo(2);
        assertThat(settings.storeCopies()).isEqualTo(3);
        assertThat(settings.replicatedShards()).isEqualTo(12);
        assertThat(settings.shardsPerNode()).isEqualTo(4);
        assertThat(new BrokerBeans().idRanges(environment)).isEqualTo(new IdRanges(64, 100_000));
    }

    @Test
    void isAddedOnceBelowTheApplicationsOwnSources() {
        StandardEnvironment environment = environment(Map.of(), Map.of());

        new PlatformDefaults().postProcessEnvironment(environment, new SpringApplication());

        assertThat(environment.getPropertySources().stream().map(source -> source.getName()))
                .containsOnlyOnce(PlatformDefaults.SOURCE_NAME).last().isEqualTo(PlatformDefaults.SOURCE_NAME);
    }

    /** An environment as Boot has it when the post-processors run: variables, then the service's files. */
    private static StandardEnvironment environment(Map<String, Object> variables, Map<String, Object> applicationYml) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new SystemEnvironmentPropertySource("test-variables", variables));
        environment.getPropertySources().addLast(new MapPropertySource("application.yml", applicationYml));
        new PlatformDefaults().postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }

    private static BrokerSettings bind(StandardEnvironment environment) {
        return Binder.get(environment).bindOrCreate(BrokerSettings.PREFIX, BrokerSettings.class);
    }
}
