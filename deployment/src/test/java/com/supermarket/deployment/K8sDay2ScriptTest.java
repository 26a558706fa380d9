package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.deployment.ScriptTranscript.Result;
import com.supermarket.deployment.ScriptTranscript.Step;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * scripts/k8s-day2.sh, the operators' week on the local cluster, checked offline (shellcheck, then
 * its {@code --dry-run} transcript): every step saves the counts, starts a paced load with retries
 * off where no drain or node loss reaches it, does its operation while the load runs, waits for the
 * release, and checks exactly once and both GETs against the counts before it.
 */
class K8sDay2ScriptTest {

    private static final Path SCRIPT = DeploymentFiles.resolve("scripts/k8s-day2.sh");
    private static final Map<String, String> ENV = Map.of("K8S_LOCAL_CACHE",
            Path.of(System.getProperty("java.io.tmpdir"), "k8s-day2-cache-" + UUID.randomUUID()).toString());
    private static final List<Step> STEPS = ScriptTranscript.dryRun(SCRIPT, ENV);
    private static final List<String> NAMES = List.of("api-rollout", "store-rollout", "store-claim", "drain-broker",
            "drain-store", "kill-broker", "upgrade", "copies");

    @Test
    void passesShellcheck() {
        Result shellcheck = ScriptTranscript.exec(List.of("shellcheck", "--external-sources", "--severity=style", SCRIPT.toString()), Map.of());

        assertThat(shellcheck.output()).as("shellcheck scripts/k8s-day2.sh").isEmpty();
        assertThat(shellcheck.status()).isZero();
    }

    @Test
    void everyStepRunsItsOperationUnderLoadBetweenTheCountsBeforeAndTheChecksAfter() {
        List<Job> loads = manifests(Job.class);

        assertThat(loads).hasSize(NAMES.size());
        for (int i = 0; i < NAMES.size(); i++) {
            String run = loads.get(i).getMetadata().getName().replace("supermarket-load-client-", "");
            int baseline = first(s -> s.manifest() instanceof Pod p && p.getMetadata().getName().equals("supermarket-baseline-" + run));
            int load = first(s -> s.manifest() instanceof Job j && j.getMetadata().getName().equals("supermarket-load-client-" + run));
            int checks = first(s -> s.manifest() instanceof Pod p && p.getMetadata().getName().equals("supermarket-checks-" + run));
            int operation = load + 1 + (int) STEPS.subList(load + 1, checks).stream()
                    .takeWhile(s -> s.words().contains("wait") || s.words().contains("sleep")).count();
            int released = first(s -> s.words().containsAll(List.of("rollout", "status", "statefulset/supermarket-rabbitmq-server")), operation);

            assertThat(baseline).as(run).isLessThan(load);
            assertThat(STEPS.get(load + 1).words()).as("%s: the load is running before the operation", run).contains("wait");
            assertThat(operation).as(run).isLessThan(released);
            assertThat(released).as(run).isLessThan(checks);
            Pod pod = (Pod) STEPS.get(checks).manifest();
            assertThat(pod.getSpec().getInitContainers().getFirst().getCommand()).as(run).contains("verify")
                    .containsSubsequence("--baseline", "/baseline/baseline.json").contains("/results/" + run + "/result.json");
            assertOnTheControlPlane(pod.getSpec());
        }
    }

    @Test
    void theLoadCountsEveryFailureAndTheRolloutsAndTheLostClaimMustFailNone() {
        List<Job> loads = manifests(Job.class);

        for (int i = 0; i < NAMES.size(); i++) {
            PodSpec spec = loads.get(i).getSpec().getTemplate().getSpec();
            List<String> args = spec.getContainers().getFirst().getArgs();
            assertThat(args).as(NAMES.get(i)).containsSubsequence("--retries", "0").contains("--get-ratio");
            if (List.of("api-rollout", "store-rollout", "store-claim").contains(NAMES.get(i))) {
                assertThat(args).as(NAMES.get(i)).containsSubsequence("--threshold", "failed<=0");
            } else {
                assertThat(args).as(NAMES.get(i)).doesNotContain("--threshold");
            }
            assertOnTheControlPlane(spec);
            assertThat(loads.get(i).getMetadata().getNamespace()).as("a rendered object names none").isEqualTo("supermarket");
            assertThat(spec.getVolumes()).filteredOn(v -> v.getName().equals("results")).singleElement()
                    .satisfies(v -> assertThat(v.getPersistentVolumeClaim().getClaimName()).isEqualTo("supermarket-day2-results"));
        }
    }

    @Test
    void rendersTheLoadJobForTheClustersKubernetesNotHelmsDefault() {
        // helm template assumes Kubernetes 1.20 unless told; the chart requires 1.28 and refused (first real run).
        assertThat(lines(s -> s.words().contains("template"))).hasSize(NAMES.size())
                .allSatisfy(l -> assertThat(ScriptTranscript.shellWords(l.substring(2))).containsSubsequence("--kube-version", "v1.35.4"));
    }

    @Test
    void theOperationsAreWhatTheyAreCalled() {
        assertThat(lines(s -> s.words().contains("upgrade") && s.words().contains("--set")))
                .anyMatch(l -> l.contains("purchaseApi.image.tag=0.1.0-day2"))
                .anyMatch(l -> l.contains("storeService.image.tag=0.1.0-day2") && l.contains("storeService.upgradeCopies=1"))
                .anyMatch(l -> l.contains("storeService.upgradeCopies=0"));
        int one = first(s -> s.words().contains("storeService.copies=1"));
        int two = first(s -> s.words().contains("storeService.copies=2"));
        assertThat(two).isGreaterThan(one);
        assertThat(lines(s -> s.words().contains("storeService.copies=2"))).as("copy 1 placed while copy 0 is held")
                .allMatch(l -> l.contains("storeService.upgradeCopies=1"));
        assertThat(first(s -> s.words().contains("storeService.upgradeCopies=0"), two)).as("then copy 0 rolls").isGreaterThan(two);
        int claim = first(s -> s.words().containsAll(List.of("delete", "pvc", "state-supermarket-store-service-c1-0")));
        assertThat(STEPS.get(claim + 1).words()).contains("delete", "pod", "supermarket-store-service-c1-0");
        assertThat(lines(s -> s.words().contains("drain"))).hasSize(2).allSatisfy(l -> assertThat(l)
                .contains("--ignore-daemonsets", "--delete-emptydir-data").doesNotContain("--force", "--disable-eviction"));
        assertThat(lines(s -> s.words().contains("uncordon"))).hasSize(2);
        assertThat(lines(s -> s.words().containsAll(List.of("delete", "pod", "supermarket-rabbitmq-server-1"))))
                .singleElement().satisfies(l -> assertThat(l).contains("--grace-period=0", "--force"));
        List<String> upgrades = lines(s -> s.words().contains("upgrade") || s.words().contains("rollback"));
        int previous = indexOf(upgrades, l -> l.contains("--reset-values") && l.contains("/tmp"));
        assertThat(upgrades.get(previous + 1)).contains("upgrade", " helm/supermarket ");
        assertThat(upgrades.get(previous + 2)).contains("rollback");
        assertThat(upgrades.get(previous + 3)).contains("upgrade", " helm/supermarket ");
    }

    private static void assertOnTheControlPlane(PodSpec spec) {
        assertThat(spec.getNodeSelector()).containsEntry("node-role.kubernetes.io/control-plane", "");
        assertThat(spec.getTolerations()).anySatisfy(t -> assertThat(t.getKey()).isEqualTo("node-role.kubernetes.io/control-plane"));
    }

    private static <T> List<T> manifests(Class<T> kind) {
        return STEPS.stream().map(Step::manifest).filter(kind::isInstance).map(kind::cast).toList();
    }

    private static List<String> lines(Predicate<Step> what) {
        return STEPS.stream().filter(what).map(Step::line).toList();
    }

    private static int indexOf(List<String> lines, Predicate<String> what) {
        for (int i = 0; i < lines.size(); i++) {
            if (what.test(lines.get(i))) {
                return i;
            }
        }
        throw new AssertionError("no such line: " + lines);
    }

    private static int first(Predicate<Step> what) {
        return first(what, 0);
    }

    private static int first(Predicate<Step> what, int from) {
        for (int i = from; i < STEPS.size(); i++) {
            if (what.test(STEPS.get(i))) {
                return i;
            }
        }
        List<String> all = new ArrayList<>(STEPS.stream().map(Step::line).toList());
        throw new AssertionError("no such step from " + from + " in the transcript:\n" + String.join("\n", all));
    }
}
