package com.supermarket.deployment;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A small model of kube-scheduler placing pods on identical nodes: a pod goes on a node with
 * enough unrequested CPU and memory and a free pod slot (and, for a one-per-node pod, no pod of
 * its name yet), preferring the least allocated node as the default scoring does. Pods are
 * placed largest first, which is kinder than a real arrival order only in packing, not in
 * capacity: a set that does not fit here does not fit in a cluster either. Not thread-safe: one
 * placement per instance.
 */
final class Scheduling {

    /** One node's remaining room (CPU in millicores, memory in MiB, pod slots) and what runs on it. */
    static final class Node {
        final int cpuAllocatable;
        final int memoryAllocatable;
        int cpuFree;
        int memoryFree;
        int podsFree;
        final Set<String> names = new HashSet<>();
        final List<String> pods = new ArrayList<>();

        Node(Size size) {
            cpuAllocatable = size.cpu();
            memoryAllocatable = size.memory();
            cpuFree = cpuAllocatable;
            memoryFree = memoryAllocatable;
            podsFree = size.pods();
        }

        boolean fits(Workloads.Pod pod) {
            return podsFree > 0 && cpuFree >= pod.cpu() && memoryFree >= pod.memory()
                    && !(pod.onePerNode() && names.contains(pod.name()));
        }

        void take(Workloads.Pod pod) {
            cpuFree -= pod.cpu();
            memoryFree -= pod.memory();
            podsFree--;
            names.add(pod.name());
            pods.add(pod.name());
        }

        /** kube-scheduler's LeastAllocated score: the mean free share of CPU and memory. */
        double freeShare() {
            return ((double) cpuFree / cpuAllocatable + (double) memoryFree / memoryAllocatable) / 2;
        }

        @Override
        public String toString() {
            return "free " + cpuFree + "m/" + memoryFree + "Mi/" + podsFree + " pods: " + pods;
        }
    }

    /** What a node offers to pods: allocatable CPU (millicores), memory (MiB) and pod slots. */
    record Size(int cpu, int memory, int pods) {

        static Size of(EksNodes.InstanceType type) {
            return new Size(type.allocatableCpu(), type.allocatableMemory(), type.maxPods());
        }
    }

    /** The outcome: the nodes as filled and the pods that found no node. */
    record Result(List<Node> nodes, List<Workloads.Pod> unplaced) {

        String describe() {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < nodes.size(); i++) {
                text.append("\n  node ").append(i).append(": ").append(nodes.get(i));
            }
            return text.append("\n  unplaced: ").append(unplaced).toString();
        }
    }

    private Scheduling() {
    }

    /** {@code count} nodes of {@code type}, each running the DaemonSets, then {@code pods} placed. */
    static Result place(EksNodes.InstanceType type, int count, List<Workloads.Pod> daemonSets, List<Workloads.Pod> pods) {
        return place(Size.of(type), count, daemonSets, pods);
    }

    /** {@code count} nodes of {@code size}, each running the DaemonSets, then {@code pods} placed. */
    static Result place(Size size, int count, List<Workloads.Pod> daemonSets, List<Workloads.Pod> pods) {
        List<Node> nodes = new ArrayList<>();
        List<Workloads.Pod> unplaced = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Node node = new Node(size);
            for (Workloads.Pod daemon : daemonSets) {
                if (node.fits(daemon)) {
                    node.take(daemon);
                } else {
                    unplaced.add(daemon);
                }
            }
            nodes.add(node);
        }
        List<Workloads.Pod> ordered = new ArrayList<>(pods);
        ordered.sort(Comparator.comparingInt(Workloads.Pod::memory).thenComparingInt(Workloads.Pod::cpu).reversed());
        for (Workloads.Pod pod : ordered) {
            nodes.stream().filter(n -> n.fits(pod)).max(Comparator.comparingDouble(Node::freeShare))
                    .ifPresentOrElse(n -> n.take(pod), () -> unplaced.add(pod));
        }
        return new Result(nodes, unplaced);
    }
}
