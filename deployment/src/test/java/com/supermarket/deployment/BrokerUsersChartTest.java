package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.contract.Topology;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;

/**
 * The chart's least-privilege broker users and database users: with every preset no service
 * logs in as the operator's default administrator, each has its own {@code User} with the
 * contract's {@link BrokerUsers} rights, the topology the services no longer declare is declared
 * by the Messaging Topology Operator exactly as {@link BrokerTopology} would, and the schema
 * owner's database credentials reach the migrations' init container only.
 */
class BrokerUsersChartTest {

    private static final Map<String, BrokerUsers> RIGHTS = Map.of("purchase-api", BrokerUsers.PURCHASE_API,
            "store-service", BrokerUsers.STORE_SERVICE, "purchases-service", BrokerUsers.PURCHASES_SERVICE);

    @ParameterizedTest(name = "{0}")
    @MethodSource("com.supermarket.deployment.HelmChartTest#valuesFiles")
    void everyServiceLogsInAsItsOwnUserWithItsRightsOnlyAndDeclaresNothing(String name, Path valuesFile) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(valuesFile, Map.of()));

        ConfigMap config = HelmChartTest.ofKind(objects, ConfigMap.class).getFirst();
        assertThat(config.getData()).containsEntry("BROKER_DECLARE", "false").containsEntry("BROKER_MANAGE_POLICIES", "false");
        Map<String, GenericKubernetesResource> users = byName(objects, "User");
        Map<String, GenericKubernetesResource> permissions = byName(objects, "Permission");
        assertThat(users).hasSize(RIGHTS.size());
        for (var service : RIGHTS.entrySet()) {
            Container container = HelmChartTest.container(objects, service.getKey());
            String secret = secretOf(container, "RABBITMQ_PASSWORD");
            assertThat(secretOf(container, "RABBITMQ_USERNAME")).isEqualTo(secret);
            assertThat(secret).as(service.getKey()).endsWith("-user-credentials").doesNotContain("default-user");
            String user = secret.substring(0, secret.length() - "-user-credentials".length());
            assertThat(spec(users.get(user))).as("User " + user).containsEntry("tags", List.of(service.getValue().tags()));
            Map<String, Object> permission = spec(permissions.values().stream()
                    .filter(p -> user.equals(map(spec(p).get("userReference")).get("name"))).findFirst().orElseThrow());
            assertThat(map(permission.get("permissions"))).as(service.getKey()).isEqualTo(Map.of(
                    "configure", service.getValue().configure(), "write", service.getValue().write(),
                    "read", service.getValue().read()));
        }
        for (var workload : HelmChartTest.workloads(objects)) {
            PodSpec pod = workload.template().getSpec();
            java.util.stream.Stream.concat(pod.getContainers().stream(), pod.getInitContainers().stream())
                    .flatMap(c -> c.getEnv().stream())
                    .filter(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null)
                    .forEach(e -> assertThat(e.getValueFrom().getSecretKeyRef().getName()).as(workload.name() + " " + e.getName())
                            .doesNotEndWith("-default-user"));
        }
    }

    @ParameterizedTest(name = "{0}, {1} store partition(s), shard queues bounded at {2} messages, {3} bytes")
    @CsvSource({"SHARDED, 1, 100000, 268435456", "REPLICATED, 1, 100000, 268435456", "SHARDED, 2, 0, 1048576",
            "REPLICATED, 4, 500, 0", "REPLICATED, 1, 0, 0"})
    void theOperatorDeclaresTheTopologyAndPoliciesTheServicesWouldHave(BrokerSettings.TopologyMode mode, int partitions,
                                                                       long maxLength, long maxLengthBytes) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "rabbitmq.topologyMode", mode.name().toLowerCase(), "storeService.partitions", Integer.toString(partitions),
                "rabbitmq.shardQueueMaxLength", Long.toString(maxLength),
                "rabbitmq.shardQueueMaxLengthBytes", Long.toString(maxLengthBytes))));
        BrokerSettings settings = new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1),
                mode, 8, null, partitions).withShardQueueBound(maxLength, maxLengthBytes);

        Set<String> expected = new TreeSet<>();
        for (Declarable declarable : BrokerTopology.declarables(settings).getDeclarables()) {
            expected.add(switch (declarable) {
                case Exchange e -> "exchange " + e.getName() + " " + e.getType();
                case Queue q -> "queue " + q.getName() + " " + new TreeMap<>(q.getArguments());
                case Binding b -> "binding " + b.getExchange() + " -> " + b.getDestination() + " "
                        + b.getDestinationType().name().toLowerCase() + " '" + b.getRoutingKey() + "'";
                default -> throw new IllegalStateException(declarable.toString());
            });
        }
        assertThat(topology(objects)).isEqualTo(expected);

        Map<String, Map<String, Object>> policies = byName(objects, "Policy").values().stream().map(BrokerUsersChartTest::spec)
                .collect(Collectors.toMap(p -> (String) p.get("name"), p -> Map.of("pattern", p.get("pattern"),
                        "apply-to", p.get("applyTo"), "priority", p.get("priority"), "definition", p.get("definition"))));
        assertThat(policies).isEqualTo(AppliedPolicies.of(settings, "/"));
        assertThat(HelmChartTest.ofKind(objects, ConfigMap.class).getFirst().getData()).as("for services that apply them")
                .containsEntry("BROKER_SHARD_QUEUE_MAX_LENGTH", Long.toString(maxLength))
                .containsEntry("BROKER_SHARD_QUEUE_MAX_LENGTH_BYTES", Long.toString(maxLengthBytes));
        for (var resource : List.of("Exchange", "Queue", "Binding", "Policy", "User", "Permission")) {
            byName(objects, resource).values().forEach(r -> assertThat(map(spec(r).get("rabbitmqClusterReference")))
                    .containsEntry("name", HelmChart.RELEASE + "-rabbitmq"));
        }
    }

    @ParameterizedTest(name = "{0}, {1} copies")
    @CsvSource({"SHARDED, 2", "REPLICATED, 2", "REPLICATED, 3"})
    void theOperatorDeclaresEachFurtherCopyGroupsStoreExchangeAsStoreX(BrokerSettings.TopologyMode mode, int copies) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("rabbitmq.topologyMode",
                mode.name().toLowerCase(), "storeService.copies", Integer.toString(copies))));
        Set<String> topology = topology(objects);
        // A pattern quotes the dot of a copy's name; without it, the copy's lines are storeX's renamed.
        byName(objects, "Policy").values().forEach(p -> topology.add("policy " + spec(p).get("name") + " "
                + spec(p).get("pattern").toString().replace("\\", "") + " " + spec(p).get("applyTo") + " "
                + spec(p).get("definition")));

        Set<String> ofStoreX = topology.stream().filter(o -> o.matches(".*\\bstoreX\\b(?!\\.c).*")
                && !o.contains("shard-queues")).collect(Collectors.toCollection(TreeSet::new));
        assertThat(ofStoreX).as("storeX's exchange, binding from the ingress%s", mode == BrokerSettings.TopologyMode.SHARDED
                ? ", sharding policy" : ", shard queues and their bindings").hasSizeGreaterThanOrEqualTo(2);
        for (int copy = 1; copy < copies; copy++) {
            String exchange = "storeX.c" + copy;
            Set<String> ofCopy = topology.stream().filter(o -> o.contains(exchange + " ") || o.contains(exchange + ".")
                    || o.contains(exchange + "-") || o.contains(exchange + "$")).filter(o -> !o.contains("shard-queues"))
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(ofCopy).as(exchange).isEqualTo(ofStoreX.stream().map(o -> o.replace("storeX", exchange))
                    .collect(Collectors.toCollection(TreeSet::new)));
        }
        String pattern = (String) spec(byName(objects, "Policy").values().stream()
                .filter(p -> Topology.SHARD_QUEUES_POLICY.equals(spec(p).get("name"))).findFirst().orElseThrow()).get("pattern");
        String copysShard = mode == BrokerSettings.TopologyMode.SHARDED ? "sharding: storeX.c1 - rabbit@node - 0"
                : Topology.replicatedShardName("storeX.c1", 0);
        assertThat(java.util.regex.Pattern.compile(pattern).matcher(copysShard).find())
                .as("dead-lettering and the bound of the copy's shard queues").isTrue();
        assertThat(byName(HelmChart.objects(HelmChart.template(null, Map.of("rabbitmq.topologyMode", mode.name().toLowerCase()))),
                "Exchange").values()).as("one copy: storeX only").noneMatch(e -> spec(e).get("name").toString().contains(".c"));
    }

    @Test
    void withoutServiceUsersTheServicesUseTheDefaultUserAndDeclare() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("rabbitmq.serviceUsers.enabled", "false")));

        assertThat(HelmChartTest.ofKind(objects, ConfigMap.class).getFirst().getData()).containsEntry("BROKER_DECLARE", "true");
        assertThat(byName(objects, "User")).isEmpty();
        assertThat(byName(objects, "Queue")).isEmpty();
        assertThat(secretOf(HelmChartTest.container(objects, "purchase-api"), "RABBITMQ_PASSWORD")).endsWith("-default-user");
    }

    @Test
    void theSchemaOwnerMigratesInAnInitContainerAndTheServiceRunsAsItsOwnUser() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of()));
        PodSpec pod = HelmChartTest.workload(objects, "purchases-service").template().getSpec();

        Container migrations = pod.getInitContainers().getFirst();
        assertThat(migrations.getCommand()).contains("-Dloader.main=com.supermarket.purchases.storage.mysql.Migrations");
        assertThat(migrations.getImage()).isEqualTo(pod.getContainers().getFirst().getImage());
        assertThat(secretOf(migrations, "MYSQL_MIGRATION_PASSWORD")).isEqualTo("supermarket-mysql-migrations");
        Container service = pod.getContainers().getFirst();
        assertThat(secretOf(service, "MYSQL_PASSWORD")).isEqualTo("supermarket-mysql");
        assertThat(service.getEnv()).anySatisfy(e -> assertThat(e).extracting(EnvVar::getName, EnvVar::getValue)
                .containsExactly("MYSQL_MIGRATE", "false"));
        assertThat(service.getEnv()).noneMatch(e -> e.getName().startsWith("MYSQL_MIGRATION_"));

        PodSpec inProcess = HelmChartTest.workload(HelmChart.objects(HelmChart.template(null,
                Map.of("persistence.mysql.migrationSecret", ""))), "purchases-service").template().getSpec();
        assertThat(inProcess.getInitContainers()).isEmpty();
        assertThat(inProcess.getContainers().getFirst().getEnv()).noneMatch(e -> e.getName().equals("MYSQL_MIGRATE"));
    }

    @Test
    void anExternalBrokerGivesEachServiceItsOwnSecretWhenNamed() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("rabbitmq.cluster.enabled", "false",
                "rabbitmq.external.serviceSecrets.purchaseApi", "api-broker-user",
                "rabbitmq.external.serviceSecrets.storeService", "store-broker-user",
                "rabbitmq.external.declare", "false")));

        assertThat(secretOf(HelmChartTest.container(objects, "purchase-api"), "RABBITMQ_PASSWORD")).isEqualTo("api-broker-user");
        assertThat(secretOf(HelmChartTest.container(objects, "store-service"), "RABBITMQ_PASSWORD")).isEqualTo("store-broker-user");
        assertThat(secretOf(HelmChartTest.container(objects, "purchases-service"), "RABBITMQ_PASSWORD"))
                .as("no Secret of its own: the shared one").isEqualTo("rabbitmq-credentials");
        assertThat(HelmChartTest.ofKind(objects, ConfigMap.class).getFirst().getData()).containsEntry("BROKER_DECLARE", "false");
        assertThat(byName(objects, "User")).isEmpty();
    }

    /** The exchanges, queues (arguments and type) and bindings the Topology Operator declares, one line each. */
    private static Set<String> topology(List<HasMetadata> objects) {
        Set<String> rendered = new TreeSet<>();
        byName(objects, "Exchange").values().forEach(e -> rendered.add("exchange " + spec(e).get("name") + " " + spec(e).get("type")));
        byName(objects, "Queue").values().forEach(q -> {
            Map<String, Object> arguments = new TreeMap<>(map(spec(q).get("arguments")));
            if (spec(q).get("type") != null) {
                arguments.put("x-queue-type", spec(q).get("type"));
            }
            rendered.add("queue " + spec(q).get("name") + " " + arguments);
        });
        byName(objects, "Binding").values().forEach(b -> rendered.add("binding " + spec(b).get("source") + " -> "
                + spec(b).get("destination") + " " + spec(b).get("destinationType") + " '" + spec(b).get("routingKey") + "'"));
        return rendered;
    }

    private static String secretOf(Container container, String variable) {
        return container.getEnv().stream().filter(e -> e.getName().equals(variable)).findFirst().orElseThrow()
                .getValueFrom().getSecretKeyRef().getName();
    }

    static Map<String, GenericKubernetesResource> byName(List<HasMetadata> objects, String kind) {
        return HelmChartTest.ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(r -> r.getKind().equals(kind) && r.getApiVersion().equals("rabbitmq.com/v1beta1"))
                .collect(Collectors.toMap(r -> r.getMetadata().getName(), r -> r));
    }

    static Map<String, Object> spec(GenericKubernetesResource resource) {
        return map(resource.getAdditionalProperties().get("spec"));
    }

    static Map<String, Object> map(Object value) {
        return value == null ? Map.of() : DeploymentFiles.map(value);
    }
}
