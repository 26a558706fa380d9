package com.supermarket.deployment;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The pods a rendered chart asks the scheduler for: each Deployment at its replica count (the
 * HPA's minimum, or maximum, when it is autoscaled), the surge of a rolling update, each
 * StatefulSet at its replica count, the RabbitmqCluster's broker pods, one per node, and a
 * load-client Job's pod. Immutable; thread-safe.
 */
final class Workloads {

    /**
     * A pod's requests (CPU in millicores, memory in MiB). {@code onePerNode}: at most one pod
     * of this name per node (the broker's anti-affinity).
     */
    record Pod(String name, int cpu, int memory, boolean onePerNode) {

        Pod(String name, int cpu, int memory) {
            this(name, cpu, memory, false);
        }
    }

    /** One workload: its pod, replicas at the minimum and at the maximum, and the extra pods of a rolling update. */
    record Workload(Pod pod, int minReplicas, int maxReplicas, int surge) {
    }

    private Workloads() {
    }

    /** The workloads of a render (objects) plus the {@code helm test} pods (hooks). */
    static List<Workload> of(List<HasMetadata> objects, List<HasMetadata> hooks) {
        List<Workload> workloads = new ArrayList<>();
        for (HasMetadata object : objects) {
            if (object instanceof Deployment deployment) {
                workloads.add(deployment(deployment, objects));
            } else if (object instanceof StatefulSet set) {
                workloads.addAll(statefulSet(set));
            } else if (object instanceof GenericKubernetesResource resource && resource.getKind().equals("RabbitmqCluster")) {
                workloads.add(broker(resource));
            } else if (object instanceof Job job) {
                // The load client's (loadClient.enabled), the topology sync's: one pod at a time.
                workloads.add(new Workload(requests(job.getMetadata().getName(),
                        job.getSpec().getTemplate().getSpec().getContainers(), false), 1, 1, 0));
            }
        }
        for (HasMetadata hook : hooks) {
            if (hook instanceof io.fabric8.kubernetes.api.model.Pod pod) {
                workloads.add(new Workload(requests(pod.getMetadata().getName(), pod.getSpec().getContainers(), false), 1, 1, 0));
            }
        }
        return workloads;
    }

    /** Every pod at the workloads' minimum, plus (when {@code withSurge}) one rolling update's surge of each. */
    static List<Pod> atMinimum(List<Workload> workloads, boolean withSurge) {
        List<Pod> pods = new ArrayList<>();
        for (Workload workload : workloads) {
            int count = workload.minReplicas() + (withSurge ? workload.surge() : 0);
            for (int i = 0; i < count; i++) {
                pods.add(workload.pod());
            }
        }
        return pods;
    }

    /** Every pod at the workloads' maximum (the HPA's maxReplicas). */
    static List<Pod> atMaximum(List<Workload> workloads) {
        List<Pod> pods = new ArrayList<>();
        for (Workload workload : workloads) {
            for (int i = 0; i < workload.maxReplicas(); i++) {
                pods.add(workload.pod());
            }
        }
        return pods;
    }

    private static Workload deployment(Deployment deployment, List<HasMetadata> objects) {
        String name = deployment.getMetadata().getName();
        Integer replicas = deployment.getSpec().getReplicas();
        int min = replicas == null ? 1 : replicas;
        int max = min;
        for (HasMetadata object : objects) {
            if (object instanceof HorizontalPodAutoscaler hpa && hpa.getSpec().getScaleTargetRef().getName().equals(name)) {
                min = hpa.getSpec().getMinReplicas();
                max = hpa.getSpec().getMaxReplicas();
            }
        }
        var strategy = deployment.getSpec().getStrategy();
        int surge = 0;
        if (strategy == null || !"Recreate".equals(strategy.getType())) {
            // Kubernetes' default maxSurge is 25%, rounded up: one pod for any small Deployment.
            IntOrString maxSurge = strategy == null || strategy.getRollingUpdate() == null
                    ? null : strategy.getRollingUpdate().getMaxSurge();
            surge = maxSurge == null ? (int) Math.ceil(min * 0.25)
                    : maxSurge.getIntVal() != null ? maxSurge.getIntVal()
                    : (int) Math.ceil(min * Integer.parseInt(maxSurge.getStrVal().replace("%", "")) / 100.0);
        }
        List<Container> containers = deployment.getSpec().getTemplate().getSpec().getContainers();
        return new Workload(requests(name, containers, false), min, max, surge);
    }

    /**
     * A StatefulSet's pods (it rolls one pod at a time by replacing it: no surge). When a hard
     * hostname spread keyed on the pod's ordinal keeps the pods of one ordinal (store-service's
     * copies of a partition, in StatefulSets of their own) off each other's node, each ordinal is
     * a workload of its own, one per node, named after the pods' component and the ordinal.
     */
    private static List<Workload> statefulSet(StatefulSet set) {
        int replicas = set.getSpec().getReplicas() == null ? 1 : set.getSpec().getReplicas();
        var template = set.getSpec().getTemplate();
        List<Container> containers = template.getSpec().getContainers();
        boolean apartByOrdinal = template.getSpec().getTopologySpreadConstraints().stream()
                .anyMatch(c -> c.getTopologyKey().equals("kubernetes.io/hostname")
                        && c.getWhenUnsatisfiable().equals("DoNotSchedule")
                        && c.getMatchLabelKeys().contains(POD_INDEX));
        if (!apartByOrdinal) {
            return List.of(new Workload(requests(set.getMetadata().getName(), containers, false), replicas, replicas, 0));
        }
        String component = template.getMetadata().getLabels().get("app.kubernetes.io/component");
        List<Workload> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < replicas; ordinal++) {
            pods.add(new Workload(requests(component + "-" + ordinal, containers, true), 1, 1, 0));
        }
        return pods;
    }

    /** The label a StatefulSet puts on each pod: its ordinal. */
    static final String POD_INDEX = "apps.kubernetes.io/pod-index";

    private static Workload broker(GenericKubernetesResource cluster) {
        int replicas = (Integer) cluster.get("spec", "replicas");
        Map<String, Object> requests = DeploymentFiles.map(cluster.get("spec", "resources", "requests"));
        Pod pod = new Pod(cluster.getMetadata().getName(), millicores(String.valueOf(requests.get("cpu"))),
                mebibytes(String.valueOf(requests.get("memory"))), true);
        // A StatefulSet rolls one pod at a time by replacing it: no surge.
        return new Workload(pod, replicas, replicas, 0);
    }

    private static Pod requests(String name, List<Container> containers, boolean onePerNode) {
        int cpu = 0;
        int memory = 0;
        for (Container container : containers) {
            Map<String, Quantity> requests = container.getResources().getRequests();
            cpu += millicores(requests.get("cpu").toString());
            memory += mebibytes(requests.get("memory").toString());
        }
        return new Pod(name, cpu, memory, onePerNode);
    }

    static int millicores(String quantity) {
        BigDecimal cores = Quantity.getAmountInBytes(new Quantity(quantity));
        return cores.multiply(BigDecimal.valueOf(1000)).setScale(0, java.math.RoundingMode.CEILING).intValueExact();
    }

    static int mebibytes(String quantity) {
        BigDecimal bytes = Quantity.getAmountInBytes(new Quantity(quantity));
        return bytes.divide(BigDecimal.valueOf(1024 * 1024), 0, java.math.RoundingMode.CEILING).intValueExact();
    }
}
