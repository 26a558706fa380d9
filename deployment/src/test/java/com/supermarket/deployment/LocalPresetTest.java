package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.testing.RabbitMqVersion;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The local preset (values-local.yaml) for the kind cluster of scripts/k8s-local.sh: the presets'
 * shape with store partitions, nothing of a cloud, every image one this machine builds, and a
 * size the machine can run beside everything else it runs. HelmChartTest lints and renders it
 * with the other presets.
 */
class LocalPresetTest {

    /** The broker image scripts/k8s-install.sh sets: the project's RabbitMQ as this machine's stand-in. */
    static final String BROKER_IMAGE = "supermarket-local/rabbitmq:" + RabbitMqVersion.version();

    private static final List<HasMetadata> OBJECTS = HelmChart.objects(HelmChart.template(HelmChart.LOCAL_VALUES,
            Map.of("loadClient.enabled", "true", "rabbitmq.cluster.image", BROKER_IMAGE)));

    /**
     * What scripts/k8s-install.sh runs on the cluster besides the release, with the requests of
     * their manifests: the RabbitMQ Cluster and Messaging Topology Operators, the MariaDB
     * the release stores in, CoreDNS (2) and local-path-provisioner (none requested; an estimate).
     */
    private static final List<Workloads.Pod> LOCAL_ADD_ONS = List.of(
            new Workloads.Pod("rabbitmq-cluster-operator", 200, 500),
            new Workloads.Pod("rabbitmq-messaging-topology-operator", 300, 128),
            new Workloads.Pod("supermarket-mysql", 100, 512),
            new Workloads.Pod("coredns", 100, 70),
            new Workloads.Pod("coredns", 100, 70),
            new Workloads.Pod("local-path-provisioner", 50, 64));

    /** kube-router, the CNI of the local cluster, on every node (its DaemonSet's requests). */
    private static final List<Workloads.Pod> DAEMON_SETS = List.of(new Workloads.Pod("kube-router", 250, 250));

    /**
     * A kind worker on this machine: every worker is a container that reports the machine's 2
     * cores, and of its memory each takes a third of the 24 GiB the machine has (other work runs
     * beside the cluster).
     */
    private static final Scheduling.Size WORKER = new Scheduling.Size(2000, 8 * 1024, 110);

    @Test
    void runsTwoCopiesOfTwoStorePartitionsBehindTwoApiReplicasOnAThreeNodeBroker() {
        ConfigMap config = HelmChartTest.ofKind(OBJECTS, ConfigMap.class).getFirst();
        assertThat(config.getData()).containsEntry("STORE_PARTITIONS", "2").containsEntry("STORE_COPIES", "2");
        assertThat(HelmChartTest.ofKind(OBJECTS, StatefulSet.class)).hasSize(2)
                .allSatisfy(set -> assertThat(set.getSpec().getReplicas()).isEqualTo(2));
        assertThat(deployment("purchase-api").getSpec().getReplicas()).isEqualTo(2);
        assertThat(budget("purchase-api").getSpec().getMinAvailable().getIntVal()).isEqualTo(1);
        assertThat((Integer) rabbitmqCluster().get("spec", "replicas")).isEqualTo(3);
    }

    @Test
    void hasNoCloudAroundIt() {
        assertThat(HelmChartTest.ofKind(OBJECTS, Ingress.class)).as("no ALB").isEmpty();
        assertThat(HelmChartTest.ofKind(OBJECTS, HorizontalPodAutoscaler.class)).as("no metrics-server").isEmpty();
        assertThat(HelmChartTest.ofKind(OBJECTS, Service.class)).filteredOn(s -> s.getMetadata().getName()
                .equals("supermarket-purchase-api")).singleElement()
                .satisfies(s -> assertThat(s.getSpec().getType()).as("reached by port-forward").isEqualTo("ClusterIP"));
        List<String> classes = new ArrayList<>();
        classes.add((String) rabbitmqCluster().get("spec", "persistence", "storageClassName"));
        HelmChartTest.ofKind(OBJECTS, PersistentVolumeClaim.class).forEach(c -> classes.add(c.getSpec().getStorageClassName()));
        HelmChartTest.ofKind(OBJECTS, StatefulSet.class).forEach(s -> s.getSpec().getVolumeClaimTemplates()
                .forEach(c -> classes.add(c.getSpec().getStorageClassName())));
        assertThat(classes).as("the cluster's default StorageClass").hasSize(4).containsOnlyNulls();
        Container api = HelmChartTest.container(OBJECTS, "purchase-api");
        assertThat(HelmChartTest.env(api, "API_IDEMPOTENCY_REDIS_URL").getValue()).isEqualTo("redis://supermarket-redis:6379/0");
        assertThat(HelmChartTest.env(HelmChartTest.container(OBJECTS, "purchases-service"), "MYSQL_URL").getValue())
                .isEqualTo("jdbc:mysql://supermarket-mysql:3306/purchases");
    }

    @Test
    void runsOnlyImagesBuiltOnThisMachineWithTheirOwnTagsAndNeverPullsThem() {
        Set<String> images = images();
        List<String> policies = containers().stream().map(Container::getImagePullPolicy).toList();

        assertThat(images).containsExactlyInAnyOrder("supermarket-local/supermarket/purchase-api:0.1.0",
                "supermarket-local/supermarket/store-service:0.1.0", "supermarket-local/supermarket/purchases-service:0.1.0",
                "supermarket-local/supermarket/load-client:0.1.0", BROKER_IMAGE,
                "supermarket-local/redis:7.0", "supermarket-local/curl:7.88", "supermarket-local/kubectl:1.35.4");
        images.forEach(HelmChartTest::assertPinned);
        // Unset (the helm test's curl): kubelet's default for a tag other than latest, IfNotPresent.
        assertThat(policies).as("nothing to pull from").containsOnly("Never", null);
    }

    @Test
    void fitsThreeWorkersOfThisMachineWithTheOperatorsALoadRunAndTheHelmTest() {
        List<HasMetadata> hooks = HelmChart.objects(HelmChart.templateTestHooks(HelmChart.LOCAL_VALUES));
        List<Workloads.Pod> pods = new ArrayList<>(LOCAL_ADD_ONS);
        pods.addAll(Workloads.atMinimum(Workloads.of(OBJECTS, hooks), false));

        Scheduling.Result result = Scheduling.place(WORKER, 3, DAEMON_SETS, pods);

        assertThat(pods).extracting(Workloads.Pod::name).contains("supermarket-load-client-1", "store-service-1");
        assertThat(result.unplaced()).as("on 3 kind workers:%s", result.describe()).isEmpty();
    }

    /** Every image the release runs: its containers' (a load run's and the helm test's too) and the broker's. */
    static Set<String> images() {
        Set<String> images = new TreeSet<>();
        containers().forEach(c -> images.add(c.getImage()));
        images.add((String) rabbitmqCluster().get("spec", "image"));
        return images;
    }

    /** Every container of the release, its init containers, the load run's and the helm test's. */
    private static List<Container> containers() {
        List<PodSpec> pods = new ArrayList<>();
        HelmChartTest.ofKind(OBJECTS, Deployment.class).forEach(d -> pods.add(d.getSpec().getTemplate().getSpec()));
        HelmChartTest.ofKind(OBJECTS, StatefulSet.class).forEach(s -> pods.add(s.getSpec().getTemplate().getSpec()));
        HelmChartTest.ofKind(OBJECTS, Job.class).forEach(j -> pods.add(j.getSpec().getTemplate().getSpec()));
        HelmChartTest.ofKind(HelmChart.objects(HelmChart.templateTestHooks(HelmChart.LOCAL_VALUES)), Pod.class)
                .forEach(p -> pods.add(p.getSpec()));
        List<Container> containers = new ArrayList<>();
        for (PodSpec pod : pods) {
            containers.addAll(pod.getContainers());
            containers.addAll(pod.getInitContainers());
        }
        return containers;
    }

    private static Deployment deployment(String component) {
        return HelmChartTest.ofKind(OBJECTS, Deployment.class).stream()
                .filter(d -> d.getMetadata().getName().equals("supermarket-" + component)).findFirst().orElseThrow();
    }

    private static PodDisruptionBudget budget(String component) {
        return HelmChartTest.ofKind(OBJECTS, PodDisruptionBudget.class).stream()
                .filter(b -> b.getMetadata().getName().equals("supermarket-" + component)).findFirst().orElseThrow();
    }

    private static GenericKubernetesResource rabbitmqCluster() {
        return HelmChartTest.ofKind(OBJECTS, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("RabbitmqCluster")).findFirst().orElseThrow();
    }
}
