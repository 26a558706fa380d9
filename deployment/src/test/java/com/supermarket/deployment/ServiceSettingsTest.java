package com.supermarket.deployment;

import static com.supermarket.deployment.DeploymentFiles.map;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The deployment files against the services as built: every environment variable the chart and
 * docker-compose.yml give a service is one its {@code application*.yml} reads (a misspelt name
 * is silently ignored at runtime, leaving the default in force), every profile they activate
 * exists, and store-service is sized and scaled the way its in-memory counts require.
 */
class ServiceSettingsTest {

    private static final String RELEASE_PREFIX = HelmChart.RELEASE + "-";

    /** Every values file, plus the two storage and the two broker flavours of the defaults. */
    static Stream<Arguments> renders() {
        List<Arguments> variants = new ArrayList<>();
        variants.add(Arguments.of("values.yaml", null, Map.of()));
        for (Path file : HelmChart.valuesFiles()) {
            variants.add(Arguments.of(file.getFileName().toString(), file, Map.of()));
        }
        variants.add(Arguments.of("persistence.store=dynamodb", null, Map.of("persistence.store", "dynamodb")));
        variants.add(Arguments.of("external broker", null, Map.of("rabbitmq.cluster.enabled", "false")));
        variants.add(Arguments.of("extra env", null, Map.of("purchasesService.env.PURCHASES_INGEST_CONSUMERS_PER_SHARD", "8",
                "purchasesService.env.MYSQL_POOL_SIZE", "10")));
        variants.add(Arguments.of("shared env", null, Map.of("platform.env.LOG_FORMAT", "",
                "platform.env.TRACING_SAMPLING_PROBABILITY", "0.5")));
        return variants.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("renders")
    void theChartGivesEachServiceOnlyVariablesItReads(String name, Path valuesFile, Map<String, Object> sets) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(valuesFile, sets));
        ConfigMap shared = HelmChartTest.ofKind(objects, ConfigMap.class).getFirst();

        for (String service : ServiceSettings.SERVICES) {
            Set<String> given = new TreeSet<>();
            container(objects, service).getEnv().forEach(e -> given.add(e.getName()));

            assertThat(given).as("variables the chart gives %s (%s) that its application*.yml never reads",
                            service, name)
                    .isSubsetOf(ServiceSettings.accepted(service));
        }
        assertThat(shared.getData().keySet()).as("shared settings (%s) that no service reads", name)
                .isSubsetOf(ServiceSettings.acceptedByAny());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("renders")
    void theChartActivatesOnlyProfilesTheServiceShips(String name, Path valuesFile, Map<String, Object> sets) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(valuesFile, sets));

        for (String service : ServiceSettings.SERVICES) {
            container(objects, service).getEnv().stream()
                    .filter(e -> e.getName().equals("SPRING_PROFILES_ACTIVE"))
                    .forEach(e -> assertThat(ServiceSettings.profiles(service)).as(service + " profiles")
                            .contains(e.getValue().split(",")));
        }
    }

    @Test
    void passesAServicesFurtherSettingsAndOwnJvmOptionsAsItsEnvironment() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "purchasesService.env.PURCHASES_INGEST_CONSUMERS_PER_SHARD", "8",
                "purchasesService.javaToolOptions", "-XX:MaxRAMPercentage=60")));

        assertThat(container(objects, "purchases-service").getEnv())
                .contains(new EnvVar("PURCHASES_INGEST_CONSUMERS_PER_SHARD", "8", null),
                        new EnvVar("JAVA_TOOL_OPTIONS", "-XX:MaxRAMPercentage=60", null));
        assertThat(container(objects, "purchase-api").getEnv()).extracting(EnvVar::getName)
                .doesNotContain("PURCHASES_INGEST_CONSUMERS_PER_SHARD", "JAVA_TOOL_OPTIONS");
    }

    @Test
    void theSharedConfigMapCarriesTheSettingsTheServicesHaveInCommon() {
        ConfigMap shared = HelmChartTest.ofKind(HelmChart.objects(HelmChart.template(null, Map.of())), ConfigMap.class)
                .getFirst();

        assertThat(shared.getData()).containsKeys("PLATFORM_MAX_STORES", "PLATFORM_MAX_ITEM_ID",
                "BROKER_SHARDS_PER_NODE", "BROKER_MANAGE_POLICIES", "RABBITMQ_MANAGEMENT_URL", "JAVA_TOOL_OPTIONS");
        for (String key : List.of("LOG_FORMAT", "BROKER_SHARDS_PER_NODE", "RABBITMQ_MANAGEMENT_URL")) {
            for (String service : ServiceSettings.SERVICES) {
                assertThat(ServiceSettings.variables(service)).as(service + " reads " + key).contains(key);
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeGivesEachServiceOnlyVariablesItReadsAndProfilesItShips() {
        Map<String, Object> compose = DeploymentFiles.yaml("docker-compose.yml");
        Map<String, Object> services = map(compose.get("services"));
        // The block every service gets: each key must be read by some service (not necessarily all).
        Set<String> sharedBlock = map(compose.get("x-broker-env")).keySet();
        assertThat(sharedBlock).as("x-broker-env settings that no service reads").isSubsetOf(ServiceSettings.acceptedByAny());
        List<String> checked = new ArrayList<>();

        services.forEach((name, definition) -> {
            Map<String, Object> build = map(map(definition).get("build"));
            String module = build == null ? null : (String) map(build.get("args")).get("MODULE");
            if (module == null || !ServiceSettings.SERVICES.contains(module)) {
                return;
            }
            Map<String, Object> environment = map(map(definition).get("environment"));
            Set<String> accepted = new TreeSet<>(ServiceSettings.accepted(module));
            if (ServiceSettings.profiles(module).contains("dynamodb")) {
                // The AWS SDK's default credential chain reads these (DynamoDB Local placeholders).
                accepted.addAll(List.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"));
            }
            accepted.addAll(sharedBlock);
            assertThat(environment.keySet()).as("variables compose gives %s (%s) that it never reads", name, module)
                    .isSubsetOf(accepted);
            Object profile = environment.get("SPRING_PROFILES_ACTIVE");
            if (profile != null) {
                assertThat(ServiceSettings.profiles(module)).as(name + " profile").contains(profile.toString());
            }
            checked.add(name);
        });

        assertThat(checked).contains("purchase-api", "store-service", "purchases-service", "purchases-service-dynamodb");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("renders")
    void storeServiceRunsOnePodPerPartitionAndIsNeverAutoscaled(String name, Path valuesFile,
            Map<String, Object> sets) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(valuesFile, sets));
        // A StatefulSet deletes a pod before it creates its replacement, so an old and a new pod
        // of one partition never consume side by side.
        StatefulSet store = HelmChartTest.storeService(objects);
        Map<String, String> shared = HelmChartTest.ofKind(objects, ConfigMap.class).getFirst().getData();

        assertThat(store.getSpec().getReplicas()).as("one pod per store partition, no more: two would split a partition's shards")
                .isEqualTo(Integer.parseInt(shared.get("STORE_PARTITIONS")));
        assertThat(HelmChartTest.ofKind(objects, HorizontalPodAutoscaler.class))
                .extracting(h -> h.getSpec().getScaleTargetRef().getName())
                .doesNotContain(store.getMetadata().getName());
    }

    @Test
    void composeRunsOneStoreService() {
        Map<String, Object> store = map(map(DeploymentFiles.yaml("docker-compose.yml").get("services"))
                .get("store-service"));

        Object replicas = map(store.get("deploy")).get("replicas");
        assertThat(replicas == null ? 1 : ((Number) replicas).intValue()).isEqualTo(1);
    }

    /**
     * The heap (memory limit x MaxRAMPercentage) must hold store-service's counts for every store
     * the preset allows with the 25% margin the service itself asks for at startup, plus 64 MiB
     * for the application. The size formula is the service's (store-service/README.md, Memory):
     * per store a row of 4 B per item and a dedup window of 28 B per remembered id.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("renders")
    void storeServiceHeapHoldsTheCountsOfEveryAllowedStore(String name, Path valuesFile, Map<String, Object> sets) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(valuesFile, sets));
        Map<String, String> shared = HelmChartTest.ofKind(objects, ConfigMap.class).getFirst().getData();
        Container container = container(objects, "store-service");

        long stores = Long.parseLong(shared.get("PLATFORM_MAX_STORES"));
        long items = Long.parseLong(shared.get("PLATFORM_MAX_ITEM_ID"));
        String javaOptions = container.getEnv().stream().filter(e -> e.getName().equals("JAVA_TOOL_OPTIONS"))
                .map(EnvVar::getValue).findFirst().orElse(shared.get("JAVA_TOOL_OPTIONS"));
        Quantity limit = container.getResources().getLimits().get("memory");

        assertHeapHoldsCounts(name, Quantity.getAmountInBytes(limit).longValue(), javaOptions, stores, items);
    }

    @Test
    void composeStoreServiceHeapHoldsTheCountsOfEveryAllowedStore() {
        Map<String, Object> store = map(map(DeploymentFiles.yaml("docker-compose.yml").get("services"))
                .get("store-service"));
        Map<String, Object> environment = map(store.get("environment"));
        String memory = (String) map(map(map(store.get("deploy")).get("resources")).get("limits")).get("memory");
        // Compose sizes are b/k/m/g in powers of 1024.
        long limit = Quantity.getAmountInBytes(new Quantity(memory.replaceAll("(?i)([kmg])b?$", "$1i")
                .replace("ki", "Ki").replace("mi", "Mi").replace("gi", "Gi"))).longValue();
        Object javaOptions = environment.get("JAVA_TOOL_OPTIONS");
        if (javaOptions == null) {
            Matcher image = Pattern.compile("JAVA_TOOL_OPTIONS=\"([^\"]*)\"")
                    .matcher(DockerfileStages.image("store-service"));
            assertThat(image.find()).as("the store-service image sets JAVA_TOOL_OPTIONS").isTrue();
            javaOptions = image.group(1);
        }

        assertHeapHoldsCounts("docker-compose.yml", limit, javaOptions.toString(),
                Long.parseLong(environment.get("PLATFORM_MAX_STORES").toString()),
                Long.parseLong(environment.get("PLATFORM_MAX_ITEM_ID").toString()));
    }

    private static void assertHeapHoldsCounts(String where, long memoryLimit, String javaOptions, long stores,
            long items) {
        long dedupWindow = 4096;
        long counts = stores * ((16 + 4 * items) + (64 + 28 * dedupWindow));
        long needed = counts * 5 / 4 + (64L << 20);
        Matcher percentage = Pattern.compile("-XX:MaxRAMPercentage=(\\d+(\\.\\d+)?)").matcher(javaOptions);
        assertThat(percentage.find()).as("store-service JAVA_TOOL_OPTIONS %s sets MaxRAMPercentage", javaOptions)
                .isTrue();
        long heap = (long) (memoryLimit * Double.parseDouble(percentage.group(1)) / 100);

        assertThat(heap).as("store-service heap (%d MiB x %s%%) for %d stores x %d items in %s: %d MiB needed",
                        memoryLimit >> 20, percentage.group(1), stores, items, where, needed >> 20)
                .isGreaterThanOrEqualTo(needed);
    }

    private static Container container(List<HasMetadata> objects, String service) {
        return HelmChartTest.container(objects, service);
    }
}
