package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.deployment.ScriptTranscript.Result;
import com.supermarket.deployment.ScriptTranscript.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * scripts/k8s-install.sh, the local install, checked offline (shellcheck, then its {@code --dry-run}
 * transcript): it loads every image values-local.yaml runs, starts the database the preset names
 * with the Secrets the chart reads before installing, installs with the preset and waits, runs
 * helm test, and checks a load run on every copy of every partition. The operators are built from
 * their Go modules into a cache that the dry run never creates, so the transcript is a first run's.
 */
class K8sInstallScriptTest {

    private static final Path SCRIPT = DeploymentFiles.resolve("scripts/k8s-install.sh");
    private static final Path CACHE = Path.of(System.getProperty("java.io.tmpdir"), "k8s-install-cache-" + UUID.randomUUID());
    private static final List<Step> STEPS = ScriptTranscript.dryRun(SCRIPT,
            Map.of("K8S_LOCAL_CACHE", CACHE.toString(), "K8S_OPERATORS_DIR", ""));
    /** Each operator's main package at the version the Go module proxy serves -> the local image built from it. */
    private static final Map<String, String> OPERATORS = Map.of(
            "github.com/rabbitmq/cluster-operator/v2/cmd@v2.20.0", "supermarket-local/rabbitmq-cluster-operator:2.20.0",
            "github.com/rabbitmq/messaging-topology-operator/cmd@v1.19.1", "supermarket-local/messaging-topology-operator:1.19.1");

    @Test
    void passesShellcheck() {
        Result shellcheck = ScriptTranscript.exec(List.of("shellcheck", "--external-sources", "--severity=style", SCRIPT.toString()), Map.of());

        assertThat(shellcheck.output()).as("shellcheck scripts/k8s-install.sh").isEmpty();
        assertThat(shellcheck.status()).isZero();
    }

    @Test
    void loadsEveryImageThePresetRunsAndEveryOperatorsBeforeUsingThem() {
        List<String> loaded = new ArrayList<>();
        STEPS.stream().filter(s -> s.words().size() > 2 && s.words().subList(0, 2).equals(List.of("scripts/k8s-local.sh", "load")))
                .forEach(s -> loaded.addAll(s.words().subList(2, s.words().size())));

        assertThat(loaded).containsAll(LocalPresetTest.images()).contains(database().getSpec().getTemplate().getSpec()
                .getContainers().getFirst().getImage()).allSatisfy(HelmChartTest::assertPinned);
        assertThat(loaded).filteredOn(i -> i.contains("operator")).containsExactlyInAnyOrderElementsOf(OPERATORS.values());
        assertThat(first(s -> s.words().get(0).equals("scripts/k8s-local.sh")))
                .isLessThan(first(s -> s.words().contains("apply")));
    }

    @Test
    void buildsEachOperatorFromItsGoModuleAtThePinnedVersionBeforeLoadingAndApplyingIt() {
        int load = first(s -> s.words().size() > 2 && s.words().get(0).equals("scripts/k8s-local.sh")
                && s.words().containsAll(OPERATORS.values()));

        OPERATORS.forEach((main, image) -> {
            String module = main.replace("/cmd@", "@");
            int download = first(s -> s.words().containsAll(List.of("go", "mod", "download", module)));
            Step copy = STEPS.get(first(s -> s.words().size() == 4 && s.words().subList(0, 3).equals(List.of("cp", "-r", "<" + module + ">"))));
            String src = copy.words().get(3);
            Path partial = Path.of(src).getParent();
            Path built = Path.of(partial.toString().replaceFirst("\\.partial$", ""));
            int build = first(s -> s.words().containsAll(List.of("go", "build", "./cmd")) && s.words().contains(src));
            int kustomize = first(s -> s.words().containsAll(List.of("kubectl", "kustomize", src + "/config/installation")));
            List<String> render = STEPS.get(kustomize).words();
            Path rendered = Path.of(render.get(render.indexOf("-o") + 1));
            int moved = first(s -> s.words().equals(List.of("mv", partial.toString(), built.toString())));
            int imported = first(s -> s.words().containsAll(List.of("docker", "import")) && s.words().getLast().equals(image));
            int applied = first(s -> s.words().size() == 3 && s.words().get(0).equals("cp")
                    && s.words().get(1).equals(built.resolve(rendered.getFileName()).toString()));

            assertThat(STEPS.get(download).words()).as(module).anySatisfy(w -> assertThat(w).startsWith("GOPATH=" + CACHE + "/"));
            assertThat(STEPS.get(build).words()).as(main).contains("CGO_ENABLED=0", "-trimpath")
                    .containsSubsequence("-C", src).anySatisfy(w -> assertThat(w).startsWith("GOPATH=" + CACHE + "/"));
            assertThat(rendered.getParent()).as("the manifest rendered into the cache, moved into place when whole")
                    .isEqualTo(partial).startsWithRaw(CACHE).isNotEqualTo(built);
            assertThat(STEPS.get(imported).words()).as(image).contains("USER 65532:65532");
            assertThat(download).isLessThan(build);
            assertThat(build).as(main + " built before its image is made and loaded").isLessThan(imported);
            assertThat(imported).isLessThan(load);
            assertThat(load).as(image + " loaded before its manifest is applied").isLessThan(applied);
            assertThat(moved).isBetween(kustomize, applied);
        });
    }

    /**
     * A second {@code operators} keeps the webhook certificate of the first: a new one reaches the
     * webhooks' CA bundle at once but the running operator's mounted Secret only a minute later, and
     * every Queue and User the chart applies meanwhile is refused (x509: unknown authority).
     */
    @Test
    void reusesTheTopologyOperatorsWebhookCertificateBeforeMakingOne() {
        int read = first(s -> s.words().containsAll(List.of("kubectl", "get", "secret", "webhook-server-cert"))
                && "rabbitmq-system".equals(s.namespace()));
        int made = first(s -> s.words().containsAll(List.of("openssl", "req")));

        assertThat(read).isLessThan(made);
    }

    @Test
    void takesPrebuiltOperatorManifestsFromTheDirectoryNamedAndBuildsNothing() {
        List<Step> steps = ScriptTranscript.dryRun(SCRIPT, Map.of("K8S_LOCAL_CACHE", CACHE.toString(),
                "K8S_OPERATORS_DIR", "/prebuilt"), "operators");

        assertThat(steps).noneSatisfy(s -> assertThat(s.words()).contains("go", "install"));
        assertThat(steps).noneSatisfy(s -> assertThat(s.words()).contains("docker"));
        assertThat(steps).filteredOn(s -> s.words().get(0).equals("cp")).extracting(s -> s.words().get(1))
                .containsExactly("/prebuilt/cluster-operator.yml", "/prebuilt/messaging-topology-operator-with-certmanager.yaml");
    }

    @Test
    void installsThePresetAndWaitsAfterItsDatabaseAndSecretsThenTestsIt() {
        int install = first(s -> s.words().containsAll(List.of("upgrade", "--install", "supermarket", "helm/supermarket")));
        Step helm = STEPS.get(install);
        List<Secret> secrets = STEPS.subList(0, install).stream().map(Step::manifest).filter(Secret.class::isInstance)
                .map(Secret.class::cast).toList();

        assertThat(helm.words()).containsSubsequence("-f", "helm/supermarket/values-local.yaml").contains("--wait")
                .containsSubsequence("--set", "rabbitmq.cluster.image=" + LocalPresetTest.BROKER_IMAGE);
        assertThat(secrets).extracting(s -> s.getMetadata().getName()).as("the Secrets the chart's MySQL settings name")
                .contains("supermarket-mysql", "supermarket-mysql-migrations");
        assertThat(STEPS.subList(0, install)).anySatisfy(s -> assertThat(s.words()).contains("rollout", "status",
                "deployment/supermarket-mysql"));
        Service service = (Service) STEPS.stream().map(Step::manifest).filter(Service.class::isInstance).findFirst().orElseThrow();
        assertThat(HelmChartTest.env(HelmChartTest.container(HelmChart.objects(HelmChart.template(HelmChart.LOCAL_VALUES,
                Map.of())), "purchases-service"), "MYSQL_URL").getValue())
                .startsWith("jdbc:mysql://" + service.getMetadata().getName() + ":3306/");
        assertThat(first(s -> s.words().containsAll(List.of("test", "supermarket")))).isGreaterThan(install);
    }

    @Test
    void checksTheLoadRunAgainstTheCountsBeforeItOnEveryCopyOfEveryPartitionAndBothGetsAgainstTheDatabase() {
        int baseline = first(s -> s.manifest() instanceof Pod p && p.getMetadata().getName().startsWith("supermarket-baseline-"));
        int load = first(s -> s.words().containsAll(List.of("upgrade", "--reuse-values", "loadClient.enabled=true")));
        int checks = first(s -> s.manifest() instanceof Pod p && p.getMetadata().getName().startsWith("supermarket-checks-"));
        Container save = ((Pod) STEPS.get(baseline).manifest()).getSpec().getContainers().getFirst();
        Pod pod = (Pod) STEPS.get(checks).manifest();
        Container verify = pod.getSpec().getInitContainers().getFirst();
        Container gets = pod.getSpec().getContainers().getFirst();

        assertThat(baseline).as("the counts saved before the run").isLessThan(load);
        assertThat(load).isLessThan(checks);
        assertThat(String.join(" ", save.getCommand())).contains("--save-baseline");
        assertThat(STEPS.get(load).words()).contains("loadClient.maxStores=64", "--wait-for-jobs");
        assertThat(verify.getCommand()).contains("verify").containsSubsequence("--store-copies", "2")
                .containsSubsequence("--baseline", "/baseline/baseline.json");
        int saved = first(s -> s.manifest() instanceof ConfigMap c && c.getMetadata().getName().startsWith("supermarket-baseline-"));
        assertThat(saved).isBetween(baseline, load);
        assertThat(pod.getSpec().getVolumes()).filteredOn(v -> v.getConfigMap() != null).singleElement()
                .satisfies(v -> assertThat(v.getConfigMap().getName()).isEqualTo(STEPS.get(saved).manifest().getMetadata().getName()));
        assertThat(Collections.frequency(verify.getCommand(), "--store-metrics-url")).as("2 copies x 2 partitions").isEqualTo(4);
        assertThat(verify.getCommand()).contains("http://supermarket-store-service-c1-1.supermarket-store-service:9090/actuator/prometheus");
        assertThat(gets.getCommand()).contains("check-gets", "jdbc:mysql://supermarket-mysql:3306/purchases");
        assertThat(Collections.frequency(gets.getCommand(), "--store-state-url")).isEqualTo(4);
    }

    @Test
    void runsTheDatabaseWithItsDataOnThePodWhereNoDrainOfAWorkerReachesIt() {
        // Its data is on the pod (emptyDir): evicted from a drained worker, it would take every stored purchase.
        PodSpec spec = database().getSpec().getTemplate().getSpec();

        assertThat(spec.getVolumes()).anySatisfy(v -> assertThat(v.getEmptyDir()).isNotNull());
        assertThat(spec.getNodeSelector()).containsEntry("node-role.kubernetes.io/control-plane", "");
        assertThat(spec.getTolerations()).anySatisfy(t -> {
            assertThat(t.getKey()).isEqualTo("node-role.kubernetes.io/control-plane");
            assertThat(t.getEffect()).isEqualTo("NoSchedule");
        });
    }

    @Test
    void buildsTheServicesWithAJdkTheProjectAcceptsWhateverTheMachinesDefaultIs() {
        // A fresh machine's default java is 17; the build's enforcer refuses it (the first run from nothing stopped there).
        Step build = STEPS.get(first(s -> s.words().contains("./mvnw")));
        String jdk = ScriptTranscript.exec(List.of(DeploymentFiles.resolve("scripts/find-jdk.sh").toString()), Map.of()).output().strip();

        assertThat(build.words()).containsSubsequence("env", "JAVA_HOME=" + jdk, "./mvnw");
    }

    @Test
    void findsTheKubectlProgramOnThePathNotTheFunctionThatWrapsIt(@TempDir Path bin) throws Exception {
        // The kubectl image is made from that program; `command -v kubectl` named the wrapper function,
        // and the first run from nothing stopped at "/work/main/kubectl: No such file or directory".
        Path kubectl = bin.resolve("kubectl");
        Files.writeString(kubectl, "#!/bin/sh\n");
        kubectl.toFile().setExecutable(true);
        String script = "dry_run=false; log() { :; }; die() { echo \"$*\"; exit 1; }; "
                + "source scripts/lib/k8s-platform.sh; kubectl_binary";

        Result found = ScriptTranscript.exec(List.of("bash", "-c", script),
                Map.of("PATH", bin + ":/usr/bin:/bin"));

        assertThat(found.output().strip()).isEqualTo(kubectl.toString());
        assertThat(found.status()).isZero();
    }

    private static Deployment database() {
        return (Deployment) STEPS.stream().map(Step::manifest).filter(Deployment.class::isInstance).findFirst().orElseThrow();
    }

    private static int first(Predicate<Step> what) {
        for (int i = 0; i < STEPS.size(); i++) {
            if (what.test(STEPS.get(i))) {
                return i;
            }
        }
        throw new AssertionError("no such step in the transcript:\n" + String.join("\n", STEPS.stream().map(Step::line).toList()));
    }
}
