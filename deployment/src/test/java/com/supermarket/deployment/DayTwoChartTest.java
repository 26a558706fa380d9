package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What the chart does to accepted purchases and counts when an operator changes a release
 * (upgrade, rollback, fewer copies, a node drain), checked on the rendered objects; the same
 * operations run for real on the local cluster (docs/faults.md).
 */
class DayTwoChartTest {

    private static final Map<String, Object> TWO_COPIES = Map.of("storeService.partitions", "2", "storeService.copies", "2");

    @Test
    void noQueueHoldingAcceptedPurchasesOrCopyZerosCountsGoesWithItsObject() {
        // The Topology Operator deletes a queue with its object by default: lowering the shard count,
        // switching the mode or a rollback would delete purchases already answered 201.
        Map<String, String> policies = queues(HelmChart.objects(HelmChart.template(null, TWO_COPIES))).stream()
                .collect(Collectors.toMap(q -> (String) q.get("spec", "name"),
                        q -> String.valueOf((Object) q.get("spec", "deletionPolicy"))));

        assertThat(policies.keySet()).contains("purchases.parking", "purchaseX.shard.0", "storeX.shard.0",
                "storeX.c1.shard.0", "store.queries.p0");
        policies.forEach((queue, policy) -> {
            if (queue.equals("purchases.parking") || queue.startsWith("purchaseX.shard.") || queue.startsWith("storeX.shard.")) {
                assertThat(policy).as(queue).isEqualTo("retain");
            } else {
                // A further copy group's queues repeat copy 0's and go with the group (its claims too);
                // the query queues hold requests that time out in seconds.
                assertThat(policy).as(queue).isEqualTo("null");
            }
        });
    }

    @Test
    void aFurtherCopyGroupsClaimsGoWithItsStatefulSetSoACopyAddedAgainRebuildsFromAPeer() {
        // Fewer copies and then more again: a retained claim would bring back counts that stopped
        // when the group went, and the copy would load them rather than rebuild.
        List<StatefulSet> sets = HelmChartTest.ofKind(HelmChart.objects(HelmChart.template(null,
                Map.of("storeService.partitions", "2", "storeService.copies", "3"))), StatefulSet.class);

        assertThat(sets).hasSize(3).allSatisfy(set -> {
            var policy = set.getSpec().getPersistentVolumeClaimRetentionPolicy();
            if (set.getMetadata().getName().equals("supermarket-store-service")) {
                assertThat(policy).as("copy 0 keeps its counts through a reinstall").isNull();
            } else {
                assertThat(policy.getWhenDeleted()).as(set.getMetadata().getName()).isEqualTo("Delete");
                assertThat(policy.getWhenScaled()).as(set.getMetadata().getName()).isEqualTo("Retain");
            }
        });
    }

    @Test
    void brokersSpreadOverZonesAsARuleAndAStoppingBrokerGivesUpWithinANodeGroupsDrainLimit() {
        GenericKubernetesResource cluster = HelmChartTest.ofKind(HelmChart.objects(HelmChart.template(null, Map.of())),
                GenericKubernetesResource.class).stream().filter(o -> o.getKind().equals("RabbitmqCluster")).findFirst().orElseThrow();
        List<Map<String, Object>> spread = cluster.get("spec", "override", "statefulSet", "spec", "template", "spec",
                "topologySpreadConstraints");

        assertThat(cluster.getMetadata().getAnnotations())
                .as("the operator's own zone spread (ScheduleAnyway) is off, so ours is the only one")
                .containsEntry("rabbitmq.com/disable-default-topology-spread-constraints", "true");
        assertThat(spread).singleElement().satisfies(c -> {
            assertThat(c).containsEntry("topologyKey", "topology.kubernetes.io/zone")
                    .containsEntry("whenUnsatisfiable", "DoNotSchedule").containsEntry("maxSkew", 1);
            assertThat(c.get("labelSelector")).isEqualTo(Map.of("matchLabels",
                    Map.of("app.kubernetes.io/name", "supermarket-rabbitmq")));
        });
        // EKS managed node group updates give up a drain after 15 minutes; the operator's default is a week.
        assertThat((Integer) cluster.get("spec", "terminationGracePeriodSeconds")).isBetween(60, 15 * 60 - 60);
    }

    private static List<GenericKubernetesResource> queues(List<HasMetadata> objects) {
        return HelmChartTest.ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("Queue")).toList();
    }
}
