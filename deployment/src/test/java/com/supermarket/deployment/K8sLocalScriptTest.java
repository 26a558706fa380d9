package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.deployment.ScriptTranscript.Result;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * scripts/k8s-local.sh, the local kind cluster, checked offline: shellcheck, then its {@code plan}
 * (what it builds, the images and the kind configuration it starts the cluster with) and the
 * refusals of {@code load}. The cluster itself is too slow to build in CI (about an hour on 2
 * cores); docs/kubernetes.md records its runs. scripts/lib/kind-runc.sh, the runtime that starts
 * kind's privileged nodes where the Docker engine lacks a capability, runs for real on a bundle.
 */
class K8sLocalScriptTest {

    private static final Path SCRIPT = DeploymentFiles.resolve("scripts/k8s-local.sh");
    private static final Path RUNTIME = DeploymentFiles.resolve("scripts/lib/kind-runc.sh");
    /** capability(7) names by number, as the kernel's linux/capability.h numbers them. */
    private static final List<String> CAPABILITIES = List.of("CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER",
            "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST",
            "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE",
            "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
            "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM",
            "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE");

    @TempDir
    Path cache;

    @Test
    void passesShellcheck() {
        for (Path script : List.of(SCRIPT, RUNTIME)) {
            Result shellcheck = ScriptTranscript.exec(List.of("shellcheck", "--severity=style", script.toString()), Map.of());
            assertThat(shellcheck.output()).as("shellcheck %s", script).isEmpty();
            assertThat(shellcheck.status()).isZero();
        }
    }

    /**
     * kind's docker (scripts/lib/kind-docker-shim.sh, first on its PATH) runs the engine's docker,
     * kind's {@code run}s on the runtime it is given, and refuses to run itself: {@code down}
     * once handed it its own path and it exec'd itself for ever.
     */
    @Test
    void kindsDockerShimRunsTheEnginesDockerAndNeverItself() throws IOException {
        Path shim = cache.resolve("docker");
        Files.copy(DeploymentFiles.resolve("scripts/lib/kind-docker-shim.sh"), shim, StandardCopyOption.COPY_ATTRIBUTES);

        Result run = ScriptTranscript.exec(List.of(shim.toString(), "run", "-d", "node"),
                Map.of("K8S_LOCAL_DOCKER", "/bin/echo", "K8S_LOCAL_RUNTIME", "kind-runc"));
        Result ps = ScriptTranscript.exec(List.of(shim.toString(), "ps", "-a"), Map.of("K8S_LOCAL_DOCKER", "/bin/echo"));
        Result itself = ScriptTranscript.exec(List.of(shim.toString(), "ps"), Map.of("K8S_LOCAL_DOCKER", shim.toString()));

        assertThat(run.output().strip()).isEqualTo("run --runtime=kind-runc -d node");
        assertThat(ps.output().strip()).isEqualTo("ps -a");
        assertThat(itself.status()).isEqualTo(1);
        assertThat(itself.output()).contains("must name the engine's docker");
    }

    @Test
    void plansEveryComponentFromSourceBeforeTheNodeImageThatHoldsIt() {
        List<String> plan = plan("plan");
        List<String> steps = plan.stream().filter(l -> l.startsWith("step ")).map(l -> l.split(" ")[1]).toList();
        assertThat(steps).containsSubsequence("kubernetes", "images", "node-image")
                .containsSubsequence("crictl", "rootfs-node", "node-image")
                .contains("kind", "pause", "etcd", "coredns", "kube-router", "local-path-provisioner", "rootfs-tools");
        assertThat(steps.getLast()).isEqualTo("node-image");
        assertThat(plan).anySatisfy(l -> assertThat(l).startsWith("versions: kubernetes=v1.35.4 kind=v0.33.0"));
        assertThat(plan).filteredOn(l -> l.startsWith("step ")).allSatisfy(
                l -> assertThat(l).as("a fresh cache has nothing built").contains(" to build"));
        List<String> runs = plan.stream().filter(l -> l.startsWith("run ")).map(l -> l.split(" "))
                .map(w -> String.join(" ", Arrays.asList(w).subList(0, Math.min(4, w.length)))).toList();
        assertThat(runs).containsSubsequence("run kind build node-image", "run kind create cluster",
                "run kubectl --context kind-supermarket", "run check");
    }

    @Test
    void everyImageHasAVersionTagSoKubeletNeverPullsIt() {
        List<String> images = plan("plan").stream().filter(l -> l.startsWith("image ") || l.startsWith("node image "))
                .map(l -> l.replaceFirst("^(node )?image ", "").split(" ")[0]).toList();
        assertThat(images).hasSizeGreaterThanOrEqualTo(12).contains(
                "registry.k8s.io/kube-apiserver:v1.35.4", "registry.k8s.io/etcd:3.6.6-0",
                "registry.k8s.io/coredns/coredns:v1.13.1", "registry.k8s.io/pause:3.10.1");
        assertThat(images).allSatisfy(image -> {
            String tag = image.substring(image.lastIndexOf('/')).contains(":") ? image.substring(image.lastIndexOf(':') + 1) : "";
            assertThat(tag).as(image).isNotEmpty().isNotEqualTo("latest");
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void kindConfigurationHasThreeWorkersInZonesAndLetsKubeletRunOnCgroupV1() {
        Map<String, Object> config = new Yaml().load(section(plan("plan"), "kind configuration"));
        assertThat(config).containsEntry("kind", "Cluster").containsEntry("name", "supermarket");
        List<Map<String, Object>> nodes = (List<Map<String, Object>>) config.get("nodes");
        assertThat(nodes).extracting(n -> n.get("role")).containsExactly("control-plane", "worker", "worker", "worker");
        assertThat(nodes.subList(1, 4)).extracting(n -> ((Map<String, Object>) n.get("labels")).get("topology.kubernetes.io/zone"))
                .containsExactly("a", "b", "c");
        assertThat((Map<String, Object>) config.get("networking")).as("kube-router replaces kind's kindnetd")
                .containsEntry("disableDefaultCNI", true);
        List<String> patches = (List<String>) config.get("kubeadmConfigPatches");
        assertThat(patches).anySatisfy(patch -> assertThat((Map<String, Object>) new Yaml().load(patch))
                .containsEntry("kind", "KubeletConfiguration").containsEntry("failCgroupV1", false));

        assertThat(plan("--name", "other", "plan")).contains("run kind create cluster --name other --image "
                + plan("plan").stream().filter(l -> l.startsWith("node image ")).findFirst().orElseThrow().substring(11)
                + " --config CONFIG");
    }

    @Test
    void checkRunsItsPodsFromThePreloadedImageOnTwoZonesWithAClaimOfTheDefaultClass() {
        KubernetesSerialization serialization = new KubernetesSerialization();
        List<HasMetadata> objects = Arrays.stream(section(plan("plan"), "check manifest").split("(?m)^---\\s*$"))
                .filter(document -> !document.isBlank())
                .map(document -> serialization.unmarshal(document, HasMetadata.class)).toList();
        List<Pod> pods = objects.stream().filter(Pod.class::isInstance).map(Pod.class::cast).toList();
        assertThat(pods).extracting(p -> p.getSpec().getNodeSelector().get("topology.kubernetes.io/zone"))
                .as("server and client on different nodes").containsExactly("a", "b");
        assertThat(pods).flatExtracting(p -> p.getSpec().getContainers()).allSatisfy((Container c) -> {
            assertThat(c.getImagePullPolicy()).isEqualTo("Never");
            assertThat(c.getImage()).startsWith("supermarket-k8s/tools:");
        });
        PersistentVolumeClaim claim = objects.stream().filter(PersistentVolumeClaim.class::isInstance)
                .map(PersistentVolumeClaim.class::cast).findFirst().orElseThrow();
        assertThat(claim.getSpec().getStorageClassName()).as("the default StorageClass").isNull();
        NetworkPolicy deny = serialization.unmarshal(section(plan("plan"), "check policy"), NetworkPolicy.class);
        assertThat(deny.getSpec().getPodSelector().getMatchLabels()).isEqualTo(pods.getFirst().getMetadata().getLabels());
        assertThat(deny.getSpec().getIngress()).as("no ingress allowed").isNullOrEmpty();
    }

    @Test
    void loadRefusesImagesWithoutAVersionTag() {
        for (String image : List.of("supermarket/purchase-api:latest", "supermarket/purchase-api", "localhost:5000/api")) {
            Result load = ScriptTranscript.exec(List.of("bash", SCRIPT.toString(), "load", image), Map.of("K8S_LOCAL_CACHE", cache.toString()));
            assertThat(load.status()).as(image).isNotZero();
            assertThat(load.output()).contains(image + " needs a tag other than latest");
        }
        assertThat(ScriptTranscript.exec(List.of("bash", SCRIPT.toString(), "load"), Map.of()).output())
                .contains("name at least one image");
    }

    @Test
    void runtimeTakesOutOfABundleExactlyTheCapabilitiesItsBoundingSetLacks() throws IOException {
        Path bundle = Files.createDirectories(cache.resolve("bundle"));
        Files.writeString(bundle.resolve("config.json"), "{\"process\": {\"capabilities\": " + allCapabilities()
                + "}, \"hostname\": \"node\"}");

        assertThat(runtime("--root", "/run/x", "create", "--bundle", bundle.toString(), "node-1"))
                .as("runc runs with the same arguments").isEqualTo("runc --root /run/x create --bundle " + bundle + " node-1\n");

        Map<String, Object> config = new Yaml().load(Files.readString(bundle.resolve("config.json")));
        assertHeldOnly(DeploymentFiles.map(DeploymentFiles.map(config.get("process")).get("capabilities")));
        assertThat(config).containsEntry("hostname", "node");
    }

    @Test
    void runtimeTakesTheSameOutOfAProcessExecutedInAPrivilegedContainer() throws IOException {
        Path process = Files.writeString(cache.resolve("process.json"), "{\"capabilities\": " + allCapabilities()
                + ", \"args\": [\"kubeadm\", \"init\"]}");

        assertThat(runtime("--root", "/run/x", "exec", "--process", process.toString(), "--detach", "node-1"))
                .isEqualTo("runc --root /run/x exec --process " + process + " --detach node-1\n");

        Map<String, Object> exec = new Yaml().load(Files.readString(process));
        assertHeldOnly(DeploymentFiles.map(exec.get("capabilities")));
        assertThat(exec).containsEntry("args", List.of("kubeadm", "init"));
    }

    /** Every capability in the bounding, effective and permitted sets of a privileged container. */
    private static String allCapabilities() {
        String all = "[\"" + String.join("\", \"", CAPABILITIES.stream().map(c -> "CAP_" + c).toList()) + "\"]";
        return "{\"bounding\": " + all + ", \"effective\": " + all + ", \"permitted\": " + all + "}";
    }

    /** Runs kind-runc.sh with a stand-in runc that prints its command line, and returns that. */
    private String runtime(String... args) throws IOException {
        Path bin = Files.createDirectories(cache.resolve("bin"));
        Path runc = Files.writeString(bin.resolve("runc"), "#!/bin/sh\necho \"runc $*\"\n");
        Files.setPosixFilePermissions(runc, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> command = new ArrayList<>(List.of("bash", RUNTIME.toString()));
        command.addAll(Arrays.asList(args));
        Result run = ScriptTranscript.exec(command, Map.of("PATH", bin + ":" + System.getenv("PATH")));
        assertThat(run.status()).as(run.output()).isZero();
        return run.output();
    }

    /** Each set holds exactly the capabilities of this process's bounding set (the runtime's too). */
    private static void assertHeldOnly(Map<String, Object> capabilities) throws IOException {
        long bounding = Long.parseLong(Files.readAllLines(Path.of("/proc/self/status")).stream()
                .filter(l -> l.startsWith("CapBnd:")).findFirst().orElseThrow().split("\\s+")[1], 16);
        List<String> held = new ArrayList<>();
        for (int i = 0; i < CAPABILITIES.size(); i++) {
            if ((bounding >> i & 1) == 1) {
                held.add("CAP_" + CAPABILITIES.get(i));
            }
        }
        assertThat(capabilities).containsOnlyKeys("bounding", "effective", "permitted")
                .allSatisfy((set, list) -> assertThat(list).as(set).isEqualTo(held));
    }

    private List<String> plan(String... args) {
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(Arrays.asList(args));
        Result result = ScriptTranscript.exec(command, Map.of("K8S_LOCAL_CACHE", cache.toString()));
        assertThat(result.status()).as("k8s-local.sh %s: %s", String.join(" ", args), result.output()).isZero();
        return result.output().lines().toList();
    }

    /** The lines after {@code --- NAME} up to the next such line. */
    private static String section(List<String> plan, String name) {
        int start = plan.indexOf("--- " + name);
        assertThat(start).as("section %s in the plan", name).isNotNegative();
        StringBuilder text = new StringBuilder();
        for (int i = start + 1; i < plan.size() && !plan.get(i).startsWith("--- "); i++) {
            text.append(plan.get(i)).append('\n');
        }
        return text.toString();
    }
}
