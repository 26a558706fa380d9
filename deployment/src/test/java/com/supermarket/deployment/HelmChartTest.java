package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart, linted and rendered offline for the default values and every values file,
 * and the rendered objects checked as typed Kubernetes objects.
 */
class HelmChartTest {

    private static final List<String> SERVICES = List.of("purchase-api", "store-service", "purchases-service");

    /** The default values (null) and each preset, the local one included. */
    static Stream<Arguments> valuesFiles() {
        return presets(HelmChart.valuesFiles());
    }

    /** The default values (null) and each EKS preset: behind an ALB, on Terraform's nodes and classes. */
    static Stream<Arguments> eksValuesFiles() {
        return presets(HelmChart.eksValuesFiles());
    }

    private static Stream<Arguments> presets(List<Path> files) {
        List<Arguments> variants = new ArrayList<>();
        variants.add(Arguments.of("values.yaml", null));
        for (Path file : files) {
            variants.add(Arguments.of(file.getFileName().toString(), file));
        }
        return variants.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void lintsCleanInStrictMode(String name, Path valuesFile) {
        LintResult lint = HelmChart.lintStrict(valuesFile);

        assertThat(lint.isFailed()).as("helm lint --strict with %s: %s", name, lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
    }

    @Test
    void offersTheMicroXlargeAndLocalPresets() {
        assertThat(HelmChart.valuesFiles()).extracting(p -> p.getFileName().toString())
                .contains("values-micro.yaml", "values-xlarge.yaml", "values-local.yaml");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eksValuesFiles")
    void rendersTheThreeServicesWithTheirServicesAndTheBroker(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        List<String> storeCopies = new ArrayList<>(List.of("supermarket-store-service"));
        for (int copy = 1; copy < copies(objects); copy++) {
            storeCopies.add("supermarket-store-service-c" + copy);
        }

        assertThat(workloads(objects)).extracting(Workload::name)
                .containsExactlyInAnyOrderElementsOf(Stream.concat(Stream.of("supermarket-purchase-api",
                        "supermarket-purchases-service"), storeCopies.stream()).toList());
        assertThat(ofKind(objects, Service.class)).extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrder("supermarket-purchase-api", "supermarket-store-service",
                        "supermarket-purchases-service", "supermarket-redis");
        assertThat(ofKind(objects, Ingress.class)).hasSize(1);
        assertThat(ofKind(objects, HorizontalPodAutoscaler.class)).hasSize(1);
        assertThat(objects).as("no namespace in metadata: the release namespace applies")
                .allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).as(o.getMetadata().getName()).isNull());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void everyContainerHasResourcesProbesAndALockedDownSecurityContext(String name, Path valuesFile) {
        for (Workload workload : workloads(render(valuesFile))) {
            PodSpec pod = workload.template().getSpec();
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
            for (Container container : pod.getContainers()) {
                String what = workload.name() + "/" + container.getName();
                assertThat(container.getResources().getRequests()).as(what).containsKeys("cpu", "memory");
                assertThat(container.getResources().getLimits()).as(what).containsKeys("cpu", "memory");
                assertThat(container.getLivenessProbe().getHttpGet().getPath()).as(what)
                        .isEqualTo("/actuator/health/liveness");
                assertThat(container.getReadinessProbe().getHttpGet().getPath()).as(what)
                        .isEqualTo("/actuator/health/readiness");
                assertThat(container.getStartupProbe()).as(what).isNotNull();
                var security = container.getSecurityContext();
                assertThat(security.getRunAsNonRoot()).as(what).isTrue();
                assertThat(security.getReadOnlyRootFilesystem()).as(what).isTrue();
                assertThat(security.getAllowPrivilegeEscalation()).as(what).isFalse();
                assertThat(security.getCapabilities().getDrop()).as(what).contains("ALL");
                assertThat(container.getVolumeMounts()).as(what + ": a writable /tmp on a read-only root")
                        .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void everyImageIsPinnedToAnExplicitVersion(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        List<String> images = new ArrayList<>();
        for (Workload workload : workloads(objects)) {
            workload.template().getSpec().getContainers().forEach(c -> images.add(c.getImage()));
        }
        ofKind(HelmChart.objects(HelmChart.templateTestHooks(valuesFile)), Pod.class)
                .forEach(p -> p.getSpec().getContainers().forEach(c -> images.add(c.getImage())));
        images.add((String) rabbitmqCluster(objects).get("spec", "image"));

        images.add(redis(objects).getSpec().getTemplate().getSpec().getContainers().getFirst().getImage());

        assertThat(images).hasSize(workloads(objects).size() + 3).allSatisfy(HelmChartTest::assertPinned);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eksValuesFiles")
    void selectorsMatchThePodLabelsAndEveryReferenceResolves(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        List<Workload> workloads = workloads(objects);
        for (Workload workload : workloads) {
            assertThat(workload.template().getMetadata().getLabels())
                    .as(workload.name())
                    .containsAllEntriesOf(workload.selector().getMatchLabels());
        }
        for (Service service : ofKind(objects, Service.class).stream().filter(HelmChartTest::isService).toList()) {
            // One service each; store-service's (headless) selects every copy group's StatefulSet.
            String component = service.getMetadata().getLabels().get("app.kubernetes.io/component");
            assertThat(workloads).as("workloads selected by Service " + service.getMetadata().getName())
                    .filteredOn(w -> w.template().getMetadata().getLabels()
                            .entrySet().containsAll(service.getSpec().getSelector().entrySet()))
                    .hasSize(component.equals("store-service") ? copies(objects) : 1)
                    .allSatisfy(w -> assertThat(w.template().getSpec().getContainers().getFirst().getPorts())
                            .anySatisfy(p -> assertThat(p.getName())
                                    .isEqualTo(service.getSpec().getPorts().getFirst().getTargetPort().getStrVal())));
        }
        PodDisruptionBudget budget = ofKind(objects, PodDisruptionBudget.class).stream()
                .filter(b -> b.getMetadata().getName().equals("supermarket-purchase-api")).findFirst().orElseThrow();
        assertThat(deployment(objects, "purchase-api").getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels());
        assertThat(budget.getSpec().getMinAvailable().getIntVal()).isPositive()
                .isLessThan(ofKind(objects, HorizontalPodAutoscaler.class).getFirst().getSpec().getMinReplicas());
        HorizontalPodAutoscaler hpa = ofKind(objects, HorizontalPodAutoscaler.class).getFirst();
        assertThat(hpa.getSpec().getScaleTargetRef().getName()).isEqualTo("supermarket-purchase-api");
        assertThat(hpa.getSpec().getMinReplicas()).as("a load-balanced front").isGreaterThanOrEqualTo(2);
        var backend = ofKind(objects, Ingress.class).getFirst().getSpec().getRules().getFirst().getHttp().getPaths()
                .getFirst().getBackend().getService();
        assertThat(backend.getName()).isEqualTo("supermarket-purchase-api");
        assertThat(ofKind(objects, Service.class)).filteredOn(s -> s.getMetadata().getName().equals(backend.getName()))
                .singleElement().satisfies(s -> assertThat(s.getSpec().getPorts()).extracting("name")
                        .contains(backend.getPort().getName()));
        for (Workload workload : workloads) {
            String account = workload.template().getSpec().getServiceAccountName();
            assertThat(ofKind(objects, ServiceAccount.class)).extracting(a -> a.getMetadata().getName())
                    .as("ServiceAccount of " + workload.name()).contains(account);
        }
    }

    @SuppressWarnings("unchecked")
    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void runsRabbitmqAsAThreeNodeOperatorClusterWithTheShardingPlugin(String name, Path valuesFile) {
        GenericKubernetesResource cluster = rabbitmqCluster(render(valuesFile));

        assertThat(cluster.getApiVersion()).isEqualTo("rabbitmq.com/v1beta1");
        assertThat((Integer) cluster.get("spec", "replicas")).isEqualTo(3);
        assertThat((List<Object>) cluster.get("spec", "rabbitmq", "additionalPlugins")).contains("rabbitmq_sharding");
        assertThat((Map<Object, Object>) cluster.get("spec", "resources")).containsKeys("requests", "limits");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eksValuesFiles")
    void noIngressPathReachesAManagementPort(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        List<Ingress> ingresses = ofKind(objects, Ingress.class);
        assertThat(ingresses).isNotEmpty();
        for (Ingress ingress : ingresses) {
            for (var rule : ingress.getSpec().getRules()) {
                for (var path : rule.getHttp().getPaths()) {
                    var backend = path.getBackend().getService();
                    Service service = ofKind(objects, Service.class).stream()
                            .filter(s -> s.getMetadata().getName().equals(backend.getName())).findFirst().orElseThrow();
                    var servicePort = service.getSpec().getPorts().stream()
                            .filter(p -> p.getName().equals(backend.getPort().getName())
                                    || Integer.valueOf(p.getPort()).equals(backend.getPort().getNumber()))
                            .findFirst().orElseThrow();
                    for (Deployment deployment : ofKind(objects, Deployment.class)) {
                        if (!deployment.getSpec().getTemplate().getMetadata().getLabels().entrySet()
                                .containsAll(service.getSpec().getSelector().entrySet())) {
                            continue;
                        }
                        Container container = deployment.getSpec().getTemplate().getSpec().getContainers().getFirst();
                        var target = container.getPorts().stream()
                                .filter(p -> p.getName().equals(servicePort.getTargetPort().getStrVal())
                                        || p.getContainerPort().equals(servicePort.getTargetPort().getIntVal()))
                                .findFirst().orElseThrow();
                        String management = env(container, "MANAGEMENT_PORT").getValue();
                        assertThat(management).as("actuator apart from the API").isNotEqualTo(env(container, "SERVER_PORT").getValue());
                        assertThat(String.valueOf(target.getContainerPort())).as("path %s of %s", path.getPath(),
                                ingress.getMetadata().getName()).isNotEqualTo(management);
                        assertThat(container.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("management");
                        assertThat(ingress.getMetadata().getAnnotations())
                                .as("the ALB checks readiness on the pod's management port, not through a path")
                                .containsEntry("alb.ingress.kubernetes.io/healthcheck-port", management);
                    }
                }
            }
        }
    }

    @Test
    void keepsTheAlbHealthCheckOnTheManagementPortWhatEverTheExtraAnnotationsSay() {
        Ingress ingress = ofKind(HelmChart.objects(HelmChart.template(null, Map.of(
                "purchaseApi.ingress.annotations.alb\\.ingress\\.kubernetes\\.io/healthcheck-port", "traffic-port"))),
                Ingress.class).getFirst();

        assertThat(ingress.getMetadata().getAnnotations())
                .containsEntry("alb.ingress.kubernetes.io/healthcheck-port", "9090");
    }

    @Test
    void servesTheApiOverTlsFromTheAcmCertificateRedirectsHttpAndAcceptsOnlyTheGivenCidrs() {
        String certificate = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d";
        Ingress ingress = ofKind(HelmChart.objects(HelmChart.template(null, Map.of(
                "purchaseApi.ingress.certificateArn", certificate,
                "purchaseApi.ingress.inboundCidrs[0]", "203.0.113.0/24"))), Ingress.class).getFirst();

        assertThat(ingress.getMetadata().getAnnotations())
                .containsEntry("alb.ingress.kubernetes.io/certificate-arn", certificate)
                .containsEntry("alb.ingress.kubernetes.io/listen-ports", "[{\"HTTP\": 80}, {\"HTTPS\": 443}]")
                .containsEntry("alb.ingress.kubernetes.io/ssl-redirect", "443")
                .containsEntry("alb.ingress.kubernetes.io/inbound-cidrs", "203.0.113.0/24")
                .containsKey("alb.ingress.kubernetes.io/ssl-policy");
        assertThat(ofKind(render(null), Ingress.class).getFirst().getMetadata().getAnnotations())
                .as("without a certificate: plain HTTP only")
                .containsEntry("alb.ingress.kubernetes.io/listen-ports", "[{\"HTTP\": 80}]")
                .doesNotContainKey("alb.ingress.kubernetes.io/ssl-redirect");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eksValuesFiles")
    void everyVolumeNamesAStorageClassThatTerraformCreates(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        List<String> classes = new ArrayList<>();
        classes.add((String) rabbitmqCluster(objects).get("spec", "persistence", "storageClassName"));
        ofKind(objects, PersistentVolumeClaim.class).forEach(c -> classes.add(c.getSpec().getStorageClassName()));
        ofKind(objects, StatefulSet.class).forEach(s -> s.getSpec().getVolumeClaimTemplates()
                .forEach(c -> classes.add(c.getSpec().getStorageClassName())));

        List<String> created = TerraformFiles.blocks("resource").stream()
                .filter(b -> b.labels().getFirst().equals("kubernetes_storage_class_v1"))
                .peek(b -> assertThat(b.attribute("storage_provisioner")).isEqualTo("\"ebs.csi.aws.com\""))
                .map(b -> b.nested("metadata").getFirst())
                .map(metadata -> metadata.replaceAll("(?s).*?name\\s*=\\s*\"([^\"]+)\".*", "$1"))
                .toList();
        assertThat(classes).as("every volume names a class (EKS 1.30+ has no default one)")
                .isNotEmpty().allSatisfy(c -> assertThat(c).isIn(created));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void givesEveryServiceTheSharedSettingsAndTheBrokerCredentialsOfItsOwnUser(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        ConfigMap config = ofKind(objects, ConfigMap.class).getFirst();
        assertThat(config.getData()).containsKeys("RABBITMQ_HOST", "RABBITMQ_PORT", "RABBITMQ_VHOST",
                "RABBITMQ_MANAGEMENT_URL", "BROKER_SHARDS_PER_NODE", "PLATFORM_MAX_STORES",
                "PLATFORM_MAX_ITEM_ID");
        assertThat(config.getData().get("RABBITMQ_HOST")).isEqualTo(rabbitmqCluster(objects).getMetadata().getName());

        for (Workload workload : workloads(objects)) {
            Container container = workload.template().getSpec().getContainers().getFirst();
            assertThat(container.getEnvFrom()).anySatisfy(
                    from -> assertThat(from.getConfigMapRef().getName()).isEqualTo(config.getMetadata().getName()));
            // The operator's Secret of the service's own User (BrokerUsersChartTest checks its rights),
            // one for every copy of store-service.
            assertThat(env(container, "RABBITMQ_PASSWORD").getValueFrom().getSecretKeyRef().getName())
                    .isEqualTo("supermarket-" + workload.template().getMetadata().getLabels().get("app.kubernetes.io/component")
                            + "-user-credentials");
            int port = container.getPorts().getFirst().getContainerPort();
            assertThat(env(container, "SERVER_PORT").getValue()).isEqualTo(String.valueOf(port));
        }
        assertThat(ports(objects)).containsExactly(8080, 8081, 8082);
    }

    @Test
    void storesPurchasesInMysqlByDefaultWithTheCredentialsFromASecret() {
        Container container = container(render(null), "purchases-service");

        assertThat(env(container, "SPRING_PROFILES_ACTIVE").getValue()).isEqualTo("mysql");
        assertThat(env(container, "MYSQL_URL").getValue()).startsWith("jdbc:mysql://");
        assertThat(env(container, "MYSQL_PASSWORD").getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
        assertThat(env(container, "MYSQL_PASSWORD").getValue()).isNull();
    }

    @Test
    void storesPurchasesInDynamodbThroughTheIrsaAnnotatedServiceAccount() {
        String role = "arn:aws:iam::123456789012:role/supermarket-purchases-service";
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null,
                Map.of("persistence.store", "dynamodb", "purchasesService.serviceAccount.roleArn", role)));

        Container container = container(objects, "purchases-service");
        assertThat(env(container, "SPRING_PROFILES_ACTIVE").getValue()).isEqualTo("dynamodb");
        assertThat(env(container, "PURCHASES_DYNAMODB_TABLE").getValue()).isEqualTo("purchases");
        assertThat(container.getEnv()).noneMatch(e -> e.getName().startsWith("MYSQL_"));
        Deployment deployment = deployment(objects, "purchases-service");
        ServiceAccount account = ofKind(objects, ServiceAccount.class).stream()
                .filter(a -> a.getMetadata().getName().equals(deployment.getSpec().getTemplate().getSpec().getServiceAccountName()))
                .findFirst().orElseThrow();
        assertThat(account.getMetadata().getAnnotations()).containsEntry("eks.amazonaws.com/role-arn", role);
    }

    @Test
    void xlargePresetStoresInDynamodbAsTheReferenceSetupDid() {
        Path xlarge = HelmChart.CHART.resolve("values-xlarge.yaml");

        assertThat(env(container(render(xlarge), "purchases-service"), "SPRING_PROFILES_ACTIVE").getValue())
                .isEqualTo("dynamodb");
    }

    @Test
    void canPointAtAnExternalBrokerInsteadOfRunningOne() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "rabbitmq.cluster.enabled", "false",
                "rabbitmq.external.host", "broker.internal",
                "rabbitmq.external.existingSecret", "broker-credentials")));

        assertThat(objects).noneMatch(o -> o.getKind().equals("RabbitmqCluster"));
        assertThat(ofKind(objects, ConfigMap.class).getFirst().getData()).containsEntry("RABBITMQ_HOST", "broker.internal");
        assertThat(env(container(objects, "store-service"), "RABBITMQ_USERNAME").getValueFrom().getSecretKeyRef().getName())
                .isEqualTo("broker-credentials");
    }

    @Test
    void refusesAnUnknownStore() {
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("persistence.store", "postgres")))
                .hasMessageContaining("persistence").hasMessageContaining("mysql");
    }

    @Test
    void refusesAMisspeltValueThroughTheSchema() {
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("purchaseApi.replicaCont", "3")))
                .hasMessageContaining("replicaCont");
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("storeService.replicaCount", "2")))
                .as("store-service scales by partitions, not replicas").hasMessageContaining("replicaCount");
    }

    @Test
    void runsOneStoreServicePodPerPartitionAndTellsEveryServiceThePartitionCount() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("storeService.partitions", "4")));

        assertThat(storeService(objects).getSpec().getReplicas()).isEqualTo(4);
        assertThat(ofKind(objects, ConfigMap.class).getFirst().getData()).containsEntry("STORE_PARTITIONS", "4");
        // Each pod is the partition of its ordinal: no STORE_PARTITION_INDEX is set, the service takes it from its host name.
        assertThat(container(objects, "store-service").getEnv()).extracting(EnvVar::getName).doesNotContain("STORE_PARTITION_INDEX");
    }

    @Test
    void refusesStorePartitionsThatDoNotDivideTheShardQueues() {
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("storeService.partitions", "3",
                "rabbitmq.topologyMode", "replicated", "rabbitmq.replicatedShards", "8")))
                .hasMessageContaining("storeService.partitions (3) must divide the storeX shard queues (8)");
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("storeService.partitions", "5",
                "rabbitmq.topologyMode", "sharded")))
                .as("4 shards per node on 3 nodes").hasMessageContaining("(12)");
    }

    @Test
    void runsEachCopyGroupAsAStatefulSetOfOnePodPerPartitionWithItsOwnClaimsCopyIndexAndPeers() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "storeService.partitions", "2", "storeService.copies", "3")));
        Service headless = ofKind(objects, Service.class).stream()
                .filter(s -> s.getMetadata().getName().equals("supermarket-store-service")).findFirst().orElseThrow();
        List<String> names = List.of("supermarket-store-service", "supermarket-store-service-c1", "supermarket-store-service-c2");

        assertThat(ofKind(objects, ConfigMap.class).getFirst().getData())
                .containsEntry("STORE_PARTITIONS", "2").containsEntry("STORE_COPIES", "3");
        assertThat(headless.getSpec().getClusterIP()).as("per-pod names for the peers").isEqualTo("None");
        assertThat(ofKind(objects, StatefulSet.class)).extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrderElementsOf(names);
        for (int copy = 0; copy < names.size(); copy++) {
            StatefulSet set = statefulSet(objects, names.get(copy));
            Container container = set.getSpec().getTemplate().getSpec().getContainers().getFirst();
            assertThat(set.getSpec().getReplicas()).as("one pod per partition").isEqualTo(2);
            assertThat(set.getSpec().getServiceName()).isEqualTo(headless.getMetadata().getName());
            assertThat(headless.getSpec().getSelector().entrySet())
                    .isSubsetOf(set.getSpec().getTemplate().getMetadata().getLabels().entrySet());
            assertThat(set.getSpec().getVolumeClaimTemplates()).singleElement()
                    .satisfies(claim -> assertThat(claim.getMetadata().getName()).isEqualTo("state"));
            assertThat(env(container, "STORE_PARTITION_COPY").getValue()).isEqualTo(String.valueOf(copy));
            assertThat(container.getEnv()).extracting(EnvVar::getName).as("the partition is the pod's ordinal")
                    .doesNotContain("STORE_PARTITION_INDEX");
            List<String> peers = new ArrayList<>();
            for (int other = 0; other < names.size(); other++) {
                if (other != copy) {
                    peers.add("http://" + names.get(other) + "-{partition}.supermarket-store-service:8081");
                }
            }
            assertThat(env(container, "STORE_REBUILD_PEERS").getValue()).isEqualTo(String.join(",", peers));
            Map<String, String> selector = set.getSpec().getSelector().getMatchLabels();
            assertThat(set.getSpec().getTemplate().getMetadata().getLabels())
                    .containsAllEntriesOf(selector).containsEntry("supermarket/store-copy", String.valueOf(copy));
            for (StatefulSet other : ofKind(objects, StatefulSet.class)) {
                if (other != set && copy > 0) {
                    assertThat(other.getSpec().getTemplate().getMetadata().getLabels().entrySet()
                            .containsAll(selector.entrySet()))
                            .as("copy %d's selector takes no pod of %s", copy, other.getMetadata().getName()).isFalse();
                }
            }
        }
        assertThat(statefulSet(objects, names.getFirst()).getSpec().getSelector().getMatchLabels())
                .as("copy 0 keeps the selector of an install from before copies (a StatefulSet's selector is immutable)")
                .isEqualTo(storeService(render(null)).getSpec().getSelector().getMatchLabels())
                .doesNotContainKey("supermarket/store-copy");

        Container alone = storeService(render(null)).getSpec().getTemplate().getSpec().getContainers().getFirst();
        assertThat(env(alone, "STORE_PARTITION_COPY").getValue()).isEqualTo("0");
        assertThat(alone.getEnv()).extracting(EnvVar::getName).as("one copy: no peers").doesNotContain("STORE_REBUILD_PEERS");
    }

    @Test
    void theCopiesOfAPartitionFindEachOtherBeforeAnyIsReadyAndEveryPartitionStartsAtOnce() {
        // A copy is Ready only once its counts are recovered, and a copy with an empty volume asks the
        // others before it is: a fresh install deadlocks unless each pod's name resolves while not
        // Ready and every pod of every partition is created without waiting for the one before it.
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "storeService.partitions", "2", "storeService.copies", "2")));
        Service headless = ofKind(objects, Service.class).stream()
                .filter(s -> s.getMetadata().getName().equals("supermarket-store-service")).findFirst().orElseThrow();

        assertThat(headless.getSpec().getPublishNotReadyAddresses()).as("peer names before Ready").isTrue();
        assertThat(ofKind(objects, StatefulSet.class)).hasSize(2).allSatisfy(set -> assertThat(
                set.getSpec().getPodManagementPolicy()).as(set.getMetadata().getName()).isEqualTo("Parallel"));
    }

    @Test
    void aDrainNeverTakesTwoCopiesOfAPartitionAndTheCopiesOfAPartitionSpreadOverZonesAndNodes() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "storeService.partitions", "4", "storeService.copies", "2")));
        List<PodDisruptionBudget> budgets = ofKind(objects, PodDisruptionBudget.class).stream()
                .filter(b -> b.getMetadata().getName().startsWith("supermarket-store-service")).toList();
        List<StatefulSet> sets = ofKind(objects, StatefulSet.class);

        // One budget per partition, not one over every pod: a drained node's evicted pod cannot start
        // on another node (its volume), so one budget over all refused the next eviction for ever.
        assertThat(budgets).extracting(b -> b.getMetadata().getName()).containsExactly(
                "supermarket-store-service-p0", "supermarket-store-service-p1", "supermarket-store-service-p2",
                "supermarket-store-service-p3");
        for (int partition = 0; partition < budgets.size(); partition++) {
            PodDisruptionBudget budget = budgets.get(partition);
            Map<String, String> selector = new java.util.HashMap<>(budget.getSpec().getSelector().getMatchLabels());
            // Not maxUnavailable: the disruption controller then counts the StatefulSets' whole scale
            // (every partition), and a budget over one partition allowed no eviction on the cluster.
            assertThat(budget.getSpec().getMaxUnavailable()).isNull();
            assertThat(budget.getSpec().getMinAvailable().getIntVal()).as("copies - 1").isEqualTo(1);
            assertThat(selector.remove(Workloads.POD_INDEX)).as("the partition, as the controller labels its pods")
                    .isEqualTo(String.valueOf(partition));
            for (StatefulSet set : sets) {
                assertThat(set.getSpec().getTemplate().getMetadata().getLabels())
                        .as("budget %d covers partition %d of %s", partition, partition, set.getMetadata().getName())
                        .containsAllEntriesOf(selector);
            }
        }
        assertThat(sets).hasSize(2).allSatisfy(set -> {
            var pod = set.getSpec().getTemplate();
            var spread = pod.getSpec().getTopologySpreadConstraints();
            assertThat(spread).extracting("topologyKey")
                    .containsExactly("topology.kubernetes.io/zone", "kubernetes.io/hostname");
            assertThat(spread).allSatisfy(c -> {
                assertThat(c.getWhenUnsatisfiable()).isEqualTo("DoNotSchedule");
                assertThat(c.getMaxSkew()).isEqualTo(1);
                // The partition: the copies of one partition are counted together, across the StatefulSets.
                assertThat(c.getMatchLabelKeys()).containsExactly(Workloads.POD_INDEX);
                for (StatefulSet copy : sets) {
                    assertThat(copy.getSpec().getTemplate().getMetadata().getLabels())
                            .containsAllEntriesOf(c.getLabelSelector().getMatchLabels());
                }
            });
        });
        assertThat(HelmChart.objects(HelmChart.template(null, Map.of("storeService.podDisruptionBudget.enabled", "false"))))
                .noneMatch(o -> o instanceof PodDisruptionBudget && o.getMetadata().getName().startsWith("supermarket-store-service"));
        assertThat(HelmChart.objects(HelmChart.template(null, Map.of("storeService.copies", "1"))))
                .as("one copy: a budget could only refuse its pod for ever")
                .noneMatch(o -> o instanceof PodDisruptionBudget && o.getMetadata().getName().startsWith("supermarket-store-service"));
    }

    @Test
    void anUpgradeCanHoldCopyZeroSoThatTheCopiesOfAPartitionNeverRestartTogetherAndNewCopiesArePlacedAroundIt() {
        Map<String, Object> values = Map.of("storeService.partitions", "2", "storeService.copies", "3");
        Map<String, Object> held = new java.util.HashMap<>(values);
        held.put("storeService.upgradeCopies", "1");

        for (StatefulSet set : ofKind(HelmChart.objects(HelmChart.template(null, values)), StatefulSet.class)) {
            assertThat(set.getSpec().getUpdateStrategy()).as("all roll: " + set.getMetadata().getName()).isNull();
        }
        for (StatefulSet set : ofKind(HelmChart.objects(HelmChart.template(null, held)), StatefulSet.class)) {
            var strategy = set.getSpec().getUpdateStrategy();
            // Copy 0 held: when copies are added, the new groups' pods are placed while every copy-0
            // pod is where its volume is. Were copy 0 rolling meanwhile, a new pod could take the
            // node of a copy-0 volume whose pod is away, and the spread would keep that pod Pending.
            if (set.getMetadata().getName().equals("supermarket-store-service")) {
                assertThat(strategy.getRollingUpdate().getPartition()).as("every pod of copy 0 held")
                        .isEqualTo(set.getSpec().getReplicas());
            } else {
                assertThat(strategy).as("%s rolls", set.getMetadata().getName()).isNull();
            }
        }
    }

    @Test
    void refusesStoreCopiesOutsideOneToThreeThroughTheSchema() {
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("storeService.copies", "0")))
                .hasMessageContaining("copies");
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("storeService.copies", "4")))
                .hasMessageContaining("copies");
        assertThat(ofKind(HelmChart.objects(HelmChart.template(null, Map.of("storeService.copies", "3"))), StatefulSet.class))
                .hasSize(3);
    }

    @Test
    void letsTheCopiesOfAPartitionReachEachOthersServerPortOnlyWhenThereAreCopies() {
        for (int copies = 1; copies <= 2; copies++) {
            List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null,
                    Map.of("storeService.copies", String.valueOf(copies))));
            NetworkPolicy egress = ofKind(objects, NetworkPolicy.class).stream()
                    .filter(p -> p.getMetadata().getName().equals("supermarket-store-service-egress")).findFirst().orElseThrow();
            var toPeers = egress.getSpec().getEgress().stream()
                    .filter(rule -> rule.getPorts().stream().anyMatch(p -> p.getPort().getIntVal() == 8081)).toList();
            if (copies == 1) {
                assertThat(toPeers).isEmpty();
            } else {
                assertThat(toPeers).singleElement().satisfies(rule -> assertThat(rule.getTo()).singleElement()
                        .satisfies(peer -> assertThat(peer.getPodSelector().getMatchLabels())
                                .containsEntry("app.kubernetes.io/component", "store-service")
                                .hasSize(3)));
            }
        }
    }

    @Test
    void shipsScrapeConfigurationAlertsAndADashboard() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "metrics.serviceMonitor.enabled", "true", "metrics.prometheusRule.enabled", "true")));
        List<GenericKubernetesResource> monitors = ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("ServiceMonitor")).toList();

        assertThat(monitors).hasSize(2);
        GenericKubernetesResource services = monitors.stream()
                .filter(m -> m.getMetadata().getName().equals("supermarket")).findFirst().orElseThrow();
        Map<String, Object> endpoint = DeploymentFiles.map(((List<?>) services.get("spec", "endpoints")).getFirst());
        assertThat(endpoint).containsEntry("port", "management").containsEntry("path", "/actuator/prometheus");
        for (Service service : ofKind(objects, Service.class).stream().filter(HelmChartTest::isService).toList()) {
            assertThat(service.getSpec().getPorts()).extracting("name").as(service.getMetadata().getName())
                    .contains("management");
        }
        GenericKubernetesResource broker = monitors.stream()
                .filter(m -> m.getMetadata().getName().equals("supermarket-rabbitmq")).findFirst().orElseThrow();
        assertThat(broker.get("spec", "endpoints").toString()).contains("port=prometheus", "/metrics/detailed",
                "queue_coarse_metrics", "queue_consumer_count");

        GenericKubernetesResource rule = ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("PrometheusRule")).findFirst().orElseThrow();
        assertThat(rule.get("spec", "groups").toString()).contains("SupermarketShardBacklogGrowing",
                "SupermarketPurchasesRefused", "SupermarketShardWithoutConsumer", "SupermarketServiceDown");
        ConfigMap dashboard = ofKind(objects, ConfigMap.class).stream()
                .filter(c -> c.getMetadata().getName().equals("supermarket-dashboard")).findFirst().orElseThrow();
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        assertThat(dashboard.getData().get("supermarket-dashboard.json"))
                .isEqualTo(DeploymentFiles.read("helm/supermarket/files/grafana/supermarket-dashboard.json").strip());
    }

    @Test
    void letsOnlyTheServicesReachTheBrokerAndKeepsTheOthersOffTheDatabase() {
        List<HasMetadata> objects = render(null);
        List<NetworkPolicy> policies = ofKind(objects, NetworkPolicy.class);
        NetworkPolicy broker = policies.stream().filter(p -> p.getMetadata().getName().equals("supermarket-rabbitmq"))
                .findFirst().orElseThrow();

        assertThat(broker.getSpec().getPolicyTypes()).containsExactly("Ingress");
        var fromServices = broker.getSpec().getIngress().getFirst().getFrom().getFirst().getPodSelector();
        assertThat(fromServices.getMatchExpressions().getFirst().getValues())
                .containsExactlyInAnyOrder("purchase-api", "store-service", "purchases-service");
        assertThat(broker.getSpec().getIngress()).allSatisfy(rule -> assertThat(rule.getFrom()).isNotEmpty());
        for (String component : List.of("purchase-api", "store-service")) {
            NetworkPolicy egress = policies.stream()
                    .filter(p -> p.getMetadata().getName().equals("supermarket-" + component + "-egress")).findFirst().orElseThrow();
            assertThat(workload(objects, component).template().getMetadata().getLabels())
                    .containsAllEntriesOf(egress.getSpec().getPodSelector().getMatchLabels());
            List<Integer> ports = component.equals("purchase-api") ? List.of(5672, 15672, 53, 6379) : List.of(5672, 15672, 53);
            assertThat(egress.getSpec().getEgress()).allSatisfy(rule -> assertThat(rule.getTo()).isNotEmpty())
                    .flatExtracting(rule -> rule.getPorts()).extracting(p -> p.getPort().getIntVal())
                    .as("the broker and DNS only (and purchase-api its idempotency store)").containsOnlyElementsOf(ports);
        }
        assertThat(policies).as("purchases-service reaches the database and AWS").noneMatch(p -> p.getMetadata().getName()
                .startsWith("supermarket-purchases-service"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eksValuesFiles")
    void bringsItsOwnRedisAsTheIdempotencyStoreReachableOnlyFromTheApi(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);

        Container api = container(objects, "purchase-api");
        assertThat(env(api, "API_IDEMPOTENCY_REDIS_URL").getValue()).isEqualTo("redis://supermarket-redis:6379/0");
        Deployment redis = redis(objects);
        assertThat(redis.getSpec().getReplicas()).as("one store of keys").isEqualTo(1);
        assertThat(redis.getSpec().getStrategy().getType()).as("never two at once").isEqualTo("Recreate");
        PodSpec pod = redis.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().getFirst();
        assertThat(container.getImage()).as("the image docker-compose runs").isEqualTo(composeDefaultImage("redis"));
        // Protected mode off by flag: Kubernetes' command replaces the image's entrypoint, so a Redis
        // compiled with it on (Debian's) would answer every client -DENIED. The NetworkPolicy guards it.
        assertThat(container.getCommand()).containsSubsequence("--maxmemory-policy", "volatile-ttl")
                .containsSubsequence("--save", "").containsSubsequence("--appendonly", "no")
                .containsSubsequence("--protected-mode", "no");
        assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(container.getResources().getLimits()).containsKeys("cpu", "memory");
        assertThat(List.of(container.getStartupProbe(), container.getLivenessProbe(), container.getReadinessProbe()))
                .doesNotContainNull();
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(container.getSecurityContext().getCapabilities().getDrop()).contains("ALL");
        Service service = ofKind(objects, Service.class).stream()
                .filter(s -> s.getMetadata().getName().equals("supermarket-redis")).findFirst().orElseThrow();
        assertThat(redis.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(service.getSpec().getSelector());

        List<NetworkPolicy> policies = ofKind(objects, NetworkPolicy.class);
        NetworkPolicy ingress = policies.stream().filter(p -> p.getMetadata().getName().equals("supermarket-redis"))
                .findFirst().orElseThrow();
        assertThat(ingress.getSpec().getIngress()).singleElement().satisfies(rule -> {
            assertThat(workload(objects, "purchase-api").template().getMetadata().getLabels())
                    .containsAllEntriesOf(rule.getFrom().getFirst().getPodSelector().getMatchLabels());
            assertThat(rule.getPorts()).extracting(p -> p.getPort().getIntVal()).containsExactly(6379);
        });
        assertThat(egressPorts(policies, "purchase-api")).contains(6379);
        assertThat(egressPorts(policies, "store-service")).doesNotContain(6379);
    }

    @Test
    void anExternalRedisReplacesTheInClusterOne() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "purchaseApi.idempotency.redisUrl", "redis://cache.example.internal:6380/0",
                "purchaseApi.idempotency.redisPort", "6380")));

        assertThat(env(container(objects, "purchase-api"), "API_IDEMPOTENCY_REDIS_URL").getValue())
                .isEqualTo("redis://cache.example.internal:6380/0");
        assertThat(container(objects, "store-service").getEnv()).extracting(EnvVar::getName).doesNotContain("API_IDEMPOTENCY_REDIS_URL");
        assertThat(objects).noneMatch(o -> o.getMetadata().getName().equals("supermarket-redis"));
        List<NetworkPolicy> policies = ofKind(objects, NetworkPolicy.class);
        assertThat(egressPorts(policies, "purchase-api")).contains(6380).doesNotContain(6379);
        assertThat(egressPorts(policies, "store-service")).doesNotContain(6380);
    }

    @Test
    void withoutAnIdempotencyStoreTheNotesSayWhatAClientLoses() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("redis.enabled", "false")));
        assertThat(container(objects, "purchase-api").getEnv()).extracting(EnvVar::getName)
                .doesNotContain("API_IDEMPOTENCY_REDIS_URL", "API_IDEMPOTENCY_TTL");
        assertThat(objects).noneMatch(o -> o.getMetadata().getName().equals("supermarket-redis"));

        assertThat(notes(Map.of("redis.enabled", "false"))).contains("WARNING: no idempotency store",
                "another body gets 201 instead of 422");
        assertThat(notes(Map.of())).doesNotContain("WARNING: no idempotency store")
                .contains("Idempotency store: the in-cluster Redis supermarket-redis");
    }

    /** NOTES.txt as `helm install --dry-run=client` prints it. */
    private static String notes(Map<String, Object> sets) {
        var install = new com.marcnuri.helm.Helm(HelmChart.CHART).install().withName(HelmChart.RELEASE)
                .withKubeVersion(HelmChart.KUBE_VERSION).clientOnly().dryRun();
        for (var set : sets.entrySet()) {
            install = install.set(set.getKey(), set.getValue());
        }
        return install.call().getOutput();
    }

    private static List<Integer> egressPorts(List<NetworkPolicy> policies, String component) {
        return policies.stream().filter(p -> p.getMetadata().getName().equals("supermarket-" + component + "-egress"))
                .findFirst().orElseThrow().getSpec().getEgress().stream()
                .flatMap(rule -> rule.getPorts().stream()).map(p -> p.getPort().getIntVal()).toList();
    }

    /** The default image of a docker-compose service: {@code ${NAME_IMAGE:-image}}. */
    private static String composeDefaultImage(String service) {
        String image = (String) DeploymentFiles.map(DeploymentFiles.map(DeploymentFiles.yaml("docker-compose.yml")
                .get("services")).get(service)).get("image");
        return image.replaceAll("^\\$\\{[A-Z_]+:-(.+)}$", "$1");
    }

    @Test
    void tracesEveryServiceToTheCollectorOnlyWhenOneIsNamedAndLetsItsPortOut() {
        assertThat(ofKind(render(null), ConfigMap.class).getFirst().getData()).as("the services' default: off")
                .doesNotContainKeys("TRACING_ENABLED", "TRACING_OTLP_ENDPOINT", "TRACING_SAMPLING_PROBABILITY");

        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "tracing.otlpEndpoint", "http://otel-collector.monitoring:4318/v1/traces",
                "platform.env.TRACING_SAMPLING_PROBABILITY", "0.5")));

        assertThat(ofKind(objects, ConfigMap.class).getFirst().getData()).containsEntry("TRACING_ENABLED", "true")
                .containsEntry("TRACING_OTLP_ENDPOINT", "http://otel-collector.monitoring:4318/v1/traces")
                .containsEntry("TRACING_SAMPLING_PROBABILITY", "0.5");
        for (String component : List.of("purchase-api", "store-service")) {
            assertThat(ofKind(objects, NetworkPolicy.class).stream()
                    .filter(p -> p.getMetadata().getName().equals("supermarket-" + component + "-egress"))
                    .findFirst().orElseThrow().getSpec().getEgress())
                    .flatExtracting(rule -> rule.getPorts()).extracting(p -> p.getPort().getIntVal()).as(component).contains(4318);
        }
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("tracing.otlpEndpoint", "otel-collector:4318")))
                .hasMessageContaining("otlpEndpoint");
    }

    @Test
    void keepsABrokerMajorityThroughDrainsAndSpreadsTheApi() {
        List<HasMetadata> objects = render(null);
        PodDisruptionBudget broker = ofKind(objects, PodDisruptionBudget.class).stream()
                .filter(b -> b.getMetadata().getName().equals("supermarket-rabbitmq")).findFirst().orElseThrow();

        assertThat(broker.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        assertThat(broker.getSpec().getSelector().getMatchLabels()).containsEntry("app.kubernetes.io/name", "supermarket-rabbitmq");
        var spread = deployment(objects, "purchase-api").getSpec().getTemplate().getSpec().getTopologySpreadConstraints();
        assertThat(spread).extracting("topologyKey").containsExactly("topology.kubernetes.io/zone", "kubernetes.io/hostname");
        assertThat(spread).allSatisfy(c -> assertThat(deployment(objects, "purchase-api").getSpec().getTemplate()
                .getMetadata().getLabels()).containsAllEntriesOf(c.getLabelSelector().getMatchLabels()));
    }

    @Test
    void runsTheStoreServiceAsOneStatefulPodWithItsStateOnAClaim() {
        StatefulSet store = storeService(render(null));

        assertThat(store.getSpec().getReplicas()).isEqualTo(1);
        PersistentVolumeClaim claim = store.getSpec().getVolumeClaimTemplates().getFirst();
        assertThat(claim.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
        assertThat(claim.getSpec().getStorageClassName()).as("global.storageClass").isEqualTo("gp3");
        assertThat(claim.getSpec().getResources().getRequests().get("storage")).hasToString("2Gi");
        Container container = store.getSpec().getTemplate().getSpec().getContainers().getFirst();
        String mountPath = container.getVolumeMounts().stream().filter(m -> m.getName().equals(claim.getMetadata().getName()))
                .findFirst().orElseThrow().getMountPath();
        assertThat(env(container, "STORE_DURABILITY_STATE_DIR").getValue()).isEqualTo(mountPath);

        StatefulSet onIo2 = storeService(HelmChart.objects(HelmChart.template(null, Map.of(
                "storeService.persistence.storageClassName", "io2", "storeService.persistence.size", "5Gi"))));
        assertThat(onIo2.getSpec().getVolumeClaimTemplates().getFirst().getSpec().getStorageClassName()).isEqualTo("io2");
        assertThat(onIo2.getSpec().getVolumeClaimTemplates().getFirst().getSpec().getResources().getRequests()
                .get("storage")).hasToString("5Gi");
    }

    @Test
    void hasAHelmTestThatPostsAPurchaseAndReadsItBack() {
        assertThat(ofKind(render(null), Pod.class)).as("hooks stay out of the release's manifests").isEmpty();
        List<Pod> pods = ofKind(HelmChart.objects(HelmChart.templateTestHooks(null)), Pod.class);

        assertThat(pods).singleElement().satisfies(pod -> {
            assertThat(pod.getMetadata().getAnnotations()).containsEntry(HelmChart.HOOK_MARKER, "test");
            Container test = pod.getSpec().getContainers().getFirst();
            String script = String.join("\n", test.getArgs());
            assertThat(script).contains("-X POST", "$api/purchase/$store/customer/", "/date/20210101",
                    "$purchases/purchases/count", "$api/items/store/$store", "http://supermarket-purchase-api:80",
                    "http://supermarket-purchases-service:8082");
            assertThat(test.getResources().getLimits()).containsKeys("cpu", "memory");
            assertThat(test.getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(test.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eksValuesFiles")
    void everyPresetMakesTillsAuthenticateWithTheHashesMountedWholeFromTheSecret(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile);
        Container api = container(objects, "purchase-api");
        var pod = workload(objects, "purchase-api").template().getSpec();

        assertThat(env(api, "API_AUTH_ENABLED").getValue()).isEqualTo("true");
        assertThat(env(api, "API_AUTH_KEYS_FILE").getValue()).isEqualTo("/etc/supermarket/till-keys/till-key-hashes");
        assertThat(api.getVolumeMounts()).filteredOn(m -> m.getName().equals("till-keys")).singleElement()
                .satisfies(mount -> {
                    assertThat(mount.getMountPath()).isEqualTo("/etc/supermarket/till-keys");
                    assertThat(mount.getSubPath()).as("a subPath mount never sees a rotated Secret").isNull();
                    assertThat(mount.getReadOnly()).isTrue();
                });
        assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals("till-keys")).singleElement()
                .satisfies(volume -> assertThat(volume.getSecret().getSecretName()).isEqualTo("supermarket-till-keys"));
        assertThat(workload(objects, "purchase-api").template().getMetadata().getAnnotations().keySet())
                .as("a rotation must not roll the pods").noneMatch(key -> key.contains("till"));
        for (String other : List.of("store-service", "purchases-service")) {
            assertThat(container(objects, other).getEnv()).extracting(EnvVar::getName).doesNotContain("API_AUTH_ENABLED");
        }
    }

    @Test
    void withAuthenticationOffNeitherTheApiNorTheHelmTestTouchesKeys() {
        Map<String, Object> off = Map.of("auth.enabled", "false");
        Container api = container(HelmChart.objects(HelmChart.template(null, off)), "purchase-api");

        assertThat(api.getEnv()).extracting(EnvVar::getName).doesNotContain("API_AUTH_ENABLED", "API_AUTH_KEYS_FILE");
        assertThat(api.getVolumeMounts()).extracting(VolumeMount::getName).doesNotContain("till-keys");
        Pod test = ofKind(HelmChart.objects(HelmChart.templateTestHooks(null, off)), Pod.class).getFirst();
        assertThat(test.getSpec().getContainers().getFirst().getEnv()).isNullOrEmpty();
    }

    @Test
    void theHelmTestSendsTheTestStoresKeyFromItsSecretWhenAuthenticationIsOn() {
        Pod test = ofKind(HelmChart.objects(HelmChart.templateTestHooks(null)), Pod.class).getFirst();
        Container container = test.getSpec().getContainers().getFirst();
        String script = String.join("\n", container.getArgs());

        assertThat(env(container, "TILL_KEY").getValueFrom().getSecretKeyRef().getName()).isEqualTo("supermarket-till-test-key");
        assertThat(script).contains("Authorization: Bearer %s", "curl -sS -K \"$auth\"", "curl -fsS -K \"$auth\" \"$api/items/store/$store\"");
        assertThat(script).as("the key stays off the command line").doesNotContain("-H \"Authorization");
    }

    static void assertPinned(String image) {
        String tag = image.substring(image.lastIndexOf('/') + 1);
        assertThat(tag).as("image %s has an explicit tag", image).contains(":");
        tag = tag.substring(tag.indexOf(':') + 1);
        assertThat(tag).as("image %s", image).isNotEqualTo("latest").matches("v?\\d+(\\.\\d+)+([_.-][A-Za-z0-9_.-]+)?");
    }

    /** The copies of every store partition a render runs (its STORE_COPIES). */
    static int copies(List<HasMetadata> objects) {
        return Integer.parseInt(ofKind(objects, ConfigMap.class).getFirst().getData().get("STORE_COPIES"));
    }

    private static List<HasMetadata> render(Path valuesFile) {
        return HelmChart.objects(HelmChart.template(valuesFile, Map.of()));
    }

    static <T> List<T> ofKind(List<HasMetadata> objects, Class<T> kind) {
        return objects.stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    static GenericKubernetesResource rabbitmqCluster(List<HasMetadata> objects) {
        return ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("RabbitmqCluster"))
                .findFirst().orElseThrow(() -> new AssertionError("no RabbitmqCluster rendered"));
    }

    /** A Deployment or a StatefulSet: the pod template and selector the tests check for every service. */
    record Workload(String name, PodTemplateSpec template, LabelSelector selector) {
    }

    /** The three services' workloads (the in-cluster Redis, a third-party image, has its own test). */
    static List<Workload> workloads(List<HasMetadata> objects) {
        List<Workload> workloads = new ArrayList<>();
        ofKind(objects, Deployment.class).stream().filter(HelmChartTest::isService).forEach(d -> workloads.add(
                new Workload(d.getMetadata().getName(), d.getSpec().getTemplate(), d.getSpec().getSelector())));
        ofKind(objects, StatefulSet.class).stream().filter(HelmChartTest::isService).forEach(s -> workloads.add(
                new Workload(s.getMetadata().getName(), s.getSpec().getTemplate(), s.getSpec().getSelector())));
        return workloads;
    }

    static boolean isService(HasMetadata object) {
        return SERVICES.contains(object.getMetadata().getLabels().get("app.kubernetes.io/component"));
    }

    static Deployment redis(List<HasMetadata> objects) {
        return deployment(objects, "redis");
    }

    private static StatefulSet statefulSet(List<HasMetadata> objects, String name) {
        return ofKind(objects, StatefulSet.class).stream().filter(s -> s.getMetadata().getName().equals(name))
                .findFirst().orElseThrow(() -> new AssertionError("no StatefulSet " + name));
    }

    static StatefulSet storeService(List<HasMetadata> objects) {
        return ofKind(objects, StatefulSet.class).stream()
                .filter(s -> s.getMetadata().getName().equals("supermarket-store-service"))
                .findFirst().orElseThrow(() -> new AssertionError("no StatefulSet store-service"));
    }

    private static Deployment deployment(List<HasMetadata> objects, String component) {
        return ofKind(objects, Deployment.class).stream()
                .filter(d -> d.getMetadata().getName().equals("supermarket-" + component))
                .findFirst().orElseThrow(() -> new AssertionError("no Deployment " + component));
    }

    static Workload workload(List<HasMetadata> objects, String component) {
        return workloads(objects).stream().filter(w -> w.name().equals("supermarket-" + component)).findFirst()
                .orElseThrow(() -> new AssertionError("no workload " + component));
    }

    static Container container(List<HasMetadata> objects, String component) {
        return workload(objects, component).template().getSpec().getContainers().getFirst();
    }

    static EnvVar env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(container.getName() + " has no env " + name));
    }

    private static List<Integer> ports(List<HasMetadata> objects) {
        return SERVICES.stream()
                .map(s -> container(objects, s).getPorts().getFirst().getContainerPort())
                .toList();
    }
}
