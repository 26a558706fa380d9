package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every EKS preset fits the EKS nodes it is documented with: values.yaml with Terraform's defaults
 * (terraform/variables.tf), values-&lt;preset&gt;.yaml with terraform/presets/&lt;preset&gt;.tfvars.
 * Each node offers what the EKS AMI leaves allocatable ({@link EksNodes}) less its DaemonSets;
 * the cluster's add-ons and the chart's pods (rendered by Helm) must all find a node.
 */
class NodeFitTest {

    /** A managed node group: instance type and node counts. */
    record NodeGroup(String instanceType, int min, int desired, int max) {
    }

    /** Each preset with the node group it is documented with. */
    static Stream<Arguments> presets() {
        List<Arguments> presets = new ArrayList<>();
        presets.add(Arguments.of("values.yaml", null, defaultNodeGroup()));
        for (Path file : HelmChart.eksValuesFiles()) {
            String preset = file.getFileName().toString().replaceAll("^values-|\\.yaml$", "");
            presets.add(Arguments.of(file.getFileName().toString(), file, nodeGroup(preset)));
        }
        return presets.stream();
    }

    @ParameterizedTest(name = "{0} on {2}")
    @MethodSource("presets")
    void everyPodAtItsMinimumSchedulesWithRoomForOneRollingUpdate(String name, Path values, NodeGroup group) {
        List<Workloads.Pod> pods = new ArrayList<>(EksNodes.CLUSTER_ADD_ONS);
        pods.addAll(Workloads.atMinimum(workloads(values), true));

        // The Cluster Autoscaler may shrink the group to its minimum while nothing is pending.
        Scheduling.Result result = Scheduling.place(EksNodes.type(group.instanceType()), group.min(),
                EksNodes.DAEMON_SETS, pods);

        assertThat(result.unplaced()).as("%s on %d x %s:%s", name, group.min(), group.instanceType(), result.describe())
                .isEmpty();
    }

    @ParameterizedTest(name = "{0} on {2}")
    @MethodSource("presets")
    void theAutoscalersMaximumFitsTheNodeGroupsMaximum(String name, Path values, NodeGroup group) {
        List<Workloads.Pod> pods = new ArrayList<>(EksNodes.CLUSTER_ADD_ONS);
        pods.addAll(Workloads.atMaximum(workloads(values)));

        Scheduling.Result result = Scheduling.place(EksNodes.type(group.instanceType()), group.max(),
                EksNodes.DAEMON_SETS, pods);

        assertThat(result.unplaced()).as("%s at the HPA maximum on %d x %s:%s", name, group.max(),
                group.instanceType(), result.describe()).isEmpty();
    }

    @ParameterizedTest(name = "{0} on {2}")
    @MethodSource("presets")
    void aLoadRunInTheClusterFitsBesideThePlatformAtItsMinimum(String name, Path values, NodeGroup group) {
        // scripts/eks.sh load: the load-client Job must not wait for the Cluster Autoscaler.
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(values, Map.of("loadClient.enabled", "true")));
        List<Workloads.Workload> workloads = Workloads.of(objects, List.of());
        assertThat(workloads).anySatisfy(w -> assertThat(w.pod().name()).isEqualTo("supermarket-load-client-1"));
        List<Workloads.Pod> pods = new ArrayList<>(EksNodes.CLUSTER_ADD_ONS);
        pods.addAll(Workloads.atMinimum(workloads, false));

        Scheduling.Result result = Scheduling.place(EksNodes.type(group.instanceType()), group.min(),
                EksNodes.DAEMON_SETS, pods);

        assertThat(result.unplaced()).as("%s with a load run on %d x %s:%s", name, group.min(), group.instanceType(),
                result.describe()).isEmpty();
    }

    @Test
    void everyPresetNamesItsNodes() {
        for (Path file : HelmChart.eksValuesFiles()) {
            String preset = file.getFileName().toString().replaceAll("^values-|\\.yaml$", "");
            assertThat(TerraformFiles.DIR.resolve("presets/" + preset + ".tfvars")).as("nodes of " + file).isRegularFile();
            assertThat(DeploymentFiles.read(file)).as(file + " names its Terraform preset")
                    .contains("presets/" + preset + ".tfvars");
        }
    }

    @Test
    void theCopiesOfAPartitionNeedNodesOfTheirOwn() {
        // The chart's hostname spread keyed on the partition: one roomy node takes one copy of each partition only.
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of(
                "storeService.partitions", "2", "storeService.copies", "2")));
        List<Workloads.Pod> store = Workloads.atMinimum(Workloads.of(objects, List.of()), false).stream()
                .filter(p -> p.name().startsWith("store-service")).toList();

        Scheduling.Result one = Scheduling.place(EksNodes.type("m5.2xlarge"), 1, List.of(), store);
        Scheduling.Result two = Scheduling.place(EksNodes.type("m5.2xlarge"), 2, List.of(), store);

        assertThat(store).extracting(Workloads.Pod::name).containsExactlyInAnyOrder(
                "store-service-0", "store-service-0", "store-service-1", "store-service-1");
        assertThat(one.unplaced()).extracting(Workloads.Pod::name).containsExactlyInAnyOrder("store-service-0", "store-service-1");
        assertThat(two.unplaced()).isEmpty();
    }

    @Test
    void aT3MicroHasNoPodSlotLeftAfterTheDaemonSets() {
        // Why values-micro.yaml runs on t3.medium: the check refuses a pod where none fits.
        Scheduling.Result result = Scheduling.place(EksNodes.type("t3.micro"), 4, EksNodes.DAEMON_SETS,
                List.of(new Workloads.Pod("any", 10, 10)));

        assertThat(result.nodes()).allSatisfy(n -> assertThat(n.podsFree).isZero());
        assertThat(result.unplaced()).extracting(Workloads.Pod::name).as("not even every DaemonSet fits")
                .contains("any", "prometheus-node-exporter");
    }

    @Test
    void allocatableFollowsTheEksAmiFormula() {
        EksNodes.InstanceType m5xlarge = EksNodes.type("m5.xlarge");
        // 4,000m less 6% + 1% + 0.5% + 0.5% of a core; 16 GiB x 0.93 less 255 + 11 x 58 MiB and 100 MiB.
        assertThat(m5xlarge.allocatableCpu()).isEqualTo(3920);
        assertThat(m5xlarge.allocatableMemory()).isEqualTo(15237 - 893 - 100);
    }

    private static List<Workloads.Workload> workloads(Path values) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(values, Map.of()));
        List<HasMetadata> hooks = HelmChart.objects(HelmChart.templateTestHooks(values));
        return Workloads.of(objects, hooks);
    }

    private static NodeGroup defaultNodeGroup() {
        String type = unquote(variable("node_instance_type").attribute("default"));
        return counts(type, variable("node_count").body());
    }

    private static NodeGroup nodeGroup(String preset) {
        String text = DeploymentFiles.read(TerraformFiles.DIR.resolve("presets/" + preset + ".tfvars"));
        Matcher type = Pattern.compile("(?m)^node_instance_type\\s*=\\s*\"([^\"]+)\"").matcher(text);
        assertThat(type.find()).as("node_instance_type in presets/%s.tfvars", preset).isTrue();
        return counts(type.group(1), text);
    }

    private static NodeGroup counts(String type, String text) {
        return new NodeGroup(type, count(text, "min"), count(text, "desired"), count(text, "max"));
    }

    private static int count(String text, String key) {
        Matcher m = Pattern.compile("(?m)^\\s+" + key + "\\s*=\\s*(\\d+)").matcher(text);
        assertThat(m.find()).as("node_count.%s", key).isTrue();
        return Integer.parseInt(m.group(1));
    }

    private static TerraformFiles.Block variable(String name) {
        return TerraformFiles.blocks("variable").stream().filter(b -> b.label().equals(name)).findFirst().orElseThrow();
    }

    private static String unquote(String value) {
        return value.replaceAll("^\"|\"$", "");
    }
}
