package com.supermarket.deployment;

import java.util.List;
import java.util.Map;

/**
 * What an EKS worker node offers to pods, computed the way the EKS-optimised AMI configures the
 * kubelet (awslabs/amazon-eks-ami), and what the cluster's own add-ons take from it. Pure data
 * and arithmetic; immutable; thread-safe.
 *
 * <p>Units: CPU in millicores, memory in MiB.
 */
final class EksNodes {

    /**
     * Share of an instance's nominal memory the kernel reports as node capacity: the hypervisor
     * and the kernel keep the rest. Observed ratios are 0.94-0.96 (m5.large reports ~7,750 of
     * 8,192 MiB); 0.93 keeps the check on the safe side.
     */
    static final double CAPACITY_SHARE = 0.93;

    /** The kubelet's hard eviction threshold on the EKS AMI ({@code memory.available<100Mi}). */
    static final int EVICTION_HARD_MIB = 100;

    /**
     * An EC2 instance type as EKS sees it. {@code maxPods} is the VPC CNI's limit without prefix
     * delegation: ENIs x (IPv4 addresses per ENI - 1) + 2 (the AMI's eni-max-pods.txt).
     */
    record InstanceType(String name, int vcpus, int memoryMib, int maxPods) {

        /** Allocatable CPU: the vCPUs less the AMI's kube-reserved share (6%, 1%, 0.5%, 0.5%, then 0.25% a core). */
        int allocatableCpu() {
            double reserved = 0;
            for (int core = 0; core < vcpus; core++) {
                reserved += switch (core) {
                    case 0 -> 60;
                    case 1 -> 10;
                    case 2, 3 -> 5;
                    default -> 2.5;
                };
            }
            return vcpus * 1000 - (int) Math.ceil(reserved);
        }

        /** Allocatable memory: capacity less kube-reserved (255 MiB + 11 MiB per pod) and the eviction threshold. */
        int allocatableMemory() {
            int capacity = (int) Math.floor(memoryMib * CAPACITY_SHARE);
            return capacity - (255 + 11 * maxPods) - EVICTION_HARD_MIB;
        }
    }

    /** The instance types the presets are documented with, and their neighbours. */
    static final Map<String, InstanceType> TYPES = Map.of(
            "t3.micro", new InstanceType("t3.micro", 2, 1024, 4),
            "t3.small", new InstanceType("t3.small", 2, 2048, 11),
            "t3.medium", new InstanceType("t3.medium", 2, 4096, 17),
            "t3.large", new InstanceType("t3.large", 2, 8192, 35),
            "t3.xlarge", new InstanceType("t3.xlarge", 4, 16384, 58),
            "m5.large", new InstanceType("m5.large", 2, 8192, 29),
            "m5.xlarge", new InstanceType("m5.xlarge", 4, 16384, 58),
            "m5.2xlarge", new InstanceType("m5.2xlarge", 8, 32768, 58));

    static InstanceType type(String name) {
        InstanceType type = TYPES.get(name);
        if (type == null) {
            throw new IllegalArgumentException("no data for instance type " + name + "; add it to EksNodes.TYPES");
        }
        return type;
    }

    /**
     * One pod per node of every DaemonSet the documented cluster runs (terraform/main.tf's
     * add-ons), with their requests as shipped, rounded up where a version differs: aws-node
     * (VPC CNI with the network policy agent), kube-proxy, ebs-csi-node, eks-pod-identity-agent,
     * and kube-prometheus-stack's node exporter.
     * Each also takes one of the node's pod slots (host-network pods count against max pods).
     */
    static final List<Workloads.Pod> DAEMON_SETS = List.of(
            new Workloads.Pod("aws-node", 50, 64),
            new Workloads.Pod("kube-proxy", 100, 64),
            new Workloads.Pod("ebs-csi-node", 30, 120),
            new Workloads.Pod("eks-pod-identity-agent", 25, 64),
            new Workloads.Pod("prometheus-node-exporter", 50, 64));

    /**
     * The cluster-wide pods of the documented set-up besides the chart (what scripts/eks.sh up
     * installs): CoreDNS (2), the EBS CSI controller (2), the AWS Load Balancer Controller
     * (2), metrics-server, cert-manager (3), the RabbitMQ Cluster and Messaging Topology
     * Operators, the Cluster Autoscaler and kube-prometheus-stack. Requests as shipped, or an upper
     * estimate where the manifest or chart leaves them empty (cert-manager's; eks.sh sets the
     * monitoring stack's to these values).
     */
    static final List<Workloads.Pod> CLUSTER_ADD_ONS = List.of(
            new Workloads.Pod("coredns", 100, 70),
            new Workloads.Pod("coredns", 100, 70),
            new Workloads.Pod("ebs-csi-controller", 60, 240),
            new Workloads.Pod("ebs-csi-controller", 60, 240),
            new Workloads.Pod("aws-load-balancer-controller", 100, 128),
            new Workloads.Pod("aws-load-balancer-controller", 100, 128),
            new Workloads.Pod("metrics-server", 100, 200),
            new Workloads.Pod("rabbitmq-cluster-operator", 200, 500),
            new Workloads.Pod("rabbitmq-messaging-topology-operator", 100, 500),
            new Workloads.Pod("cert-manager", 50, 128),
            new Workloads.Pod("cert-manager-cainjector", 50, 128),
            new Workloads.Pod("cert-manager-webhook", 50, 128),
            new Workloads.Pod("cluster-autoscaler", 100, 600),
            // kube-prometheus-stack (the ServiceMonitors, PrometheusRule and dashboard need it):
            // Prometheus sized for this platform's few targets, Grafana, the operator, kube-state-metrics.
            new Workloads.Pod("prometheus", 500, 2048),
            new Workloads.Pod("grafana", 100, 256),
            new Workloads.Pod("prometheus-operator", 100, 128),
            new Workloads.Pod("kube-state-metrics", 50, 128));

    private EksNodes() {
    }
}
