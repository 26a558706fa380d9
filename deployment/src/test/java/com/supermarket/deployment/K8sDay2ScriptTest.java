package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.deployment.ScriptTranscript.Result;
import com.supermarket.deployment.ScriptTranscript.Step;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
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
            "drain-store", "kill-broker", "upgrade", "copies", "partitions", "broker-password");

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
        for (int i = 0; i < STEPS.size(); i++) {
            if (STEPS.get(i).words().contains("storeService.copies=1")) {
                assertThat(STEPS.get(first(s -> s.words().contains("storeService.copies=2"), i)).words())
                        .as("copy 1 added while copy 0 is held").contains("storeService.upgradeCopies=1");
            }
        }
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

    @Test
    void partitionsChangeByTheDocumentedProcedureThereAndBackLeavingTheReleaseAsFound() {
        int there = first(s -> Collections.indexOfSubList(s.words(), List.of("repartition", "--partitions", "4")) >= 0);
        int back = first(s -> Collections.indexOfSubList(s.words(), List.of("repartition", "--partitions", "2")) >= 0, there);

        assertRepartition(0, there, 2, 4);
        assertRepartition(there + 1, back, 4, 2);
        assertThat(lines(s -> s.words().contains("upgrade") && s.line().contains("storeService.partitions=")).getLast())
                .as("the release is left with the partitions it had").contains("storeService.partitions=2");
        assertThat(lines(s -> s.words().contains("upgrade") && s.line().contains("purchaseApi.replicaCount=")).getLast())
                .as("and purchase-api's replicas").contains("purchaseApi.replicaCount=2");
    }

    /** One change {@code from} -> {@code to}: its commands from index {@code start}, its repartition command at {@code command}. */
    private static void assertRepartition(int start, int command, int from, int to) {
        String what = from + " -> " + to;
        int stopped = first(s -> s.words().containsAll(List.of("scale", "deployment/supermarket-purchase-api", "--replicas=0")), start);
        int drained = first(s -> s.words().contains("list_queues"), stopped);
        assertThat(drained).as("%s: the storeX queues emptied after intake stopped, before the counts are taken", what)
                .isLessThan(command);
        assertThat(STEPS.get(command).words()).as(what).containsSubsequence("exec", "supermarket-store-repartition")
                .containsSubsequence("--out", "/seeds/p" + to)
                .containsAll(IntStream.range(0, from)
                        .mapToObj(p -> "http://supermarket-store-service-" + p + ".supermarket-store-service:8081").toList());
        Pod runner = (Pod) STEPS.get(first(s -> s.manifest() instanceof Pod p
                && p.getMetadata().getName().equals("supermarket-store-repartition"), start)).manifest();
        assertOnTheControlPlane(runner.getSpec());
        assertThat(runner.getSpec().getContainers().getFirst().getImage()).as("the release's store-service image")
                .contains("store-service");

        int storesStopped = first(s -> s.words().containsAll(List.of("scale", "statefulset/supermarket-store-service-c1", "--replicas=0")), command);
        int seeded = first(s -> s.manifest() instanceof PersistentVolumeClaim, command);
        List<String> deleted = STEPS.subList(storesStopped, seeded).stream()
                .filter(s -> s.words().containsAll(List.of("delete", "pvc"))).map(s -> s.words().get(s.words().indexOf("pvc") + 1)).toList();
        assertThat(deleted).as("%s: every claim of every copy", what).containsExactlyInAnyOrderElementsOf(IntStream.range(0, from)
                .boxed().flatMap(p -> List.of("state-supermarket-store-service-" + p, "state-supermarket-store-service-c1-" + p).stream()).toList());

        int upgraded = first(s -> s.words().contains("upgrade") && s.words().contains("storeService.partitions=" + to)
                && !s.words().contains("--dry-run"), seeded);
        List<Step> seeding = STEPS.subList(seeded, upgraded);
        assertThat(seeding.stream().map(Step::manifest).filter(PersistentVolumeClaim.class::isInstance)
                .map(m -> m.getMetadata().getName())).as("%s: copy 0's new claims", what)
                .containsExactlyElementsOf(IntStream.range(0, to).mapToObj(q -> "state-supermarket-store-service-" + q).toList());
        assertThat(seeding.stream().map(Step::manifest).filter(Pod.class::isInstance).map(Pod.class::cast)
                .filter(p -> p.getMetadata().getName().startsWith("supermarket-store-seed-")))
                .as("%s: a seed pod mounting each at the state directory", what).hasSize(to).allSatisfy(p -> {
                    String q = p.getMetadata().getName().replace("supermarket-store-seed-", "");
                    Volume state = p.getSpec().getVolumes().getFirst();
                    assertThat(state.getPersistentVolumeClaim().getClaimName()).isEqualTo("state-supermarket-store-service-" + q);
                    assertThat(p.getSpec().getContainers().getFirst().getVolumeMounts().getFirst().getMountPath())
                            .isEqualTo("/var/lib/store-service");
                });
        assertThat(seeding.stream().filter(s -> s.words().contains("|")).map(Step::line)).as("%s: each seed copied in", what)
                .hasSize(to).allSatisfy(l -> assertThat(l).contains("tar -C /seeds/p" + to + "/p", "--strip-components=1"));

        assertThat(STEPS.get(upgraded).words()).as("%s: copy 0 alone first, purchase-api held at 0", what)
                .contains("storeService.copies=1", "purchaseApi.replicaCount=0");
        int copies = first(s -> s.words().contains("upgrade") && s.words().contains("storeService.copies=2"), upgraded);
        assertThat(STEPS.get(copies).words()).as("%s: copy 1 placed while copy 0 is held", what)
                .contains("storeService.upgradeCopies=1");
        int resumed = first(s -> s.words().contains("upgrade") && s.words().contains("purchaseApi.replicaCount=2"), copies);
        assertThat(STEPS.get(resumed).words()).as("%s: then copy 0 rolls and intake resumes", what)
                .contains("storeService.upgradeCopies=0");
        // The values file each upgrade passes again names the count, the copies and the replicas, and
        // would override what the release reuses: the first real run came back to 2 partitions and 2
        // purchase-api replicas in the middle of the change.
        assertThat(List.of(upgraded, copies, resumed)).as("%s: every upgrade names what the values file would reset", what)
                .allSatisfy(i -> assertThat(STEPS.get(i).words()).contains("storeService.partitions=" + to)
                        .anyMatch(w -> w.startsWith("storeService.copies="))
                        .anyMatch(w -> w.startsWith("purchaseApi.replicaCount=")));
        assertThat(STEPS.get(copies).words()).contains("purchaseApi.replicaCount=0");
        assertThat(summaries(upgraded, copies)).as("%s: copy 0 of every new partition says what was written", what)
                .containsExactlyElementsOf(IntStream.range(0, to).mapToObj(q -> summaryOf("supermarket-store-service-" + q)).toList());
        assertThat(summaries(copies, resumed)).as("%s: and copy 1, rebuilt from it, before intake resumes", what)
                .containsExactlyElementsOf(IntStream.range(0, to).mapToObj(q -> summaryOf("supermarket-store-service-c1-" + q)).toList());
    }

    private static List<String> summaries(int from, int to) {
        return STEPS.subList(from, to).stream().filter(s -> s.words().contains("--raw")).map(s -> s.words().getLast()).toList();
    }

    private static String summaryOf(String pod) {
        return "/api/v1/namespaces/supermarket/pods/" + pod + ":8081/proxy/state/summary";
    }

    @Test
    void theBrokerPasswordIsRotatedByTheDocumentedProcedureAndItsReadersRolledByTheChecksum() {
        int patched = first(s -> s.words().containsAll(List.of("patch", "secret", "supermarket-purchases-service-user-credentials")));
        int annotated = first(s -> s.words().containsAll(List.of("annotate", "users.rabbitmq.com", "supermarket-purchases-service")), patched);
        int taken = first(s -> s.words().contains("authenticate_user"), annotated);
        int rolled = first(s -> s.words().contains("upgrade") && s.line().contains("secretChecksums."), taken);
        int rolledOut = first(s -> s.words().containsAll(List.of("rollout", "status", "deployment/supermarket-purchases-service")), rolled);

        assertThat(STEPS.get(patched).words()).as("the password on standard input, never on a command line")
                .containsSubsequence("--patch-file", "/dev/stdin");
        assertThat(STEPS.get(annotated).line()).contains("--overwrite");
        assertThat(STEPS.get(rolled).words()).as("the checksum annotation's value: the Secret's sha-256")
                .anyMatch(w -> w.matches("secretChecksums\\.supermarket-purchases-service-user-credentials=[0-9a-f]{64}"))
                .containsSubsequence("--set-string");
        assertThat(rolledOut).isGreaterThan(rolled);
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
