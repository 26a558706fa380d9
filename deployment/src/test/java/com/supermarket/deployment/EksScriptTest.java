package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.deployment.ScriptTranscript.Result;
import com.supermarket.deployment.ScriptTranscript.Step;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * scripts/eks.sh, the EKS walkthrough, checked offline: shellcheck, then its {@code --dry-run}
 * transcript (every command it would run, every manifest it would apply, in order) for the
 * facts that broke the walkthrough as written: the quota check before anything is created, the
 * namespace before its first use on both store paths, every manifest a valid object, the chart
 * installed with values that render, the load-client Job keeping image and command, and the
 * teardown deleting every claim and waiting (boundedly) for the volumes before terraform destroy.
 * The quota refusal runs for real against a stand-in {@code aws}. The manifests are parsed with
 * fabric8, as the chart tests do: {@code kubectl apply --dry-run=client} needs the API server's
 * discovery even with {@code --validate=false}, so it cannot run without a cluster.
 */
class EksScriptTest {


    private static final Path SCRIPT = DeploymentFiles.resolve("scripts/eks.sh");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    /** Namespaces that exist in every cluster, and those the operators' own manifests create. */
    private static final Map<String, String> CREATED_BY_MANIFEST = Map.of(
            "cert-manager", "cert-manager.yaml", "rabbitmq-system", "cluster-operator.yml");
    private static final String CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/example";

    @Test
    void passesShellcheck() throws Exception {
        assertThat(exec(List.of("bash", "-n", SCRIPT.toString()), Map.of()).status()).isZero();
        Result shellcheck;
        try {
            shellcheck = exec(List.of("shellcheck", "--external-sources", "--severity=style", SCRIPT.toString()), Map.of());
        } catch (java.io.UncheckedIOException e) {
            throw new AssertionError("shellcheck is needed (Debian: apt-get install shellcheck; scripts/test.sh installs it)", e);
        }
        assertThat(shellcheck.output()).as("shellcheck scripts/eks.sh").isEmpty();
        assertThat(shellcheck.status()).isZero();
    }

    @ParameterizedTest(name = "{0} preset, {1} store")
    @CsvSource({"micro, mysql", "xlarge, dynamodb", "xlarge, mysql"})
    void upChecksTheQuotaFirstAndCreatesTheNamespaceBeforeItsFirstUse(String preset, String store) {
        List<Step> steps = dryRun("--preset", preset, "--store", store, "--certificate-arn", CERTIFICATE, "up");

        int quota = first(steps, s -> s.words().containsAll(List.of("service-quotas", "get-service-quota"))
                && s.words().contains("L-1216C47A"));
        int firstChange = first(steps, s -> s.words().contains("apply") || s.words().contains("build")
                || s.words().contains("upgrade") || s.words().contains("init"));
        assertThat(quota).as("the vCPU quota is read before anything is created").isLessThan(firstChange);

        Set<String> namespaces = new HashSet<>(Set.of("kube-system"));
        for (Step step : steps) {
            String used = step.namespace();
            if (step.manifest() instanceof Namespace created) {
                namespaces.add(created.getMetadata().getName());
                assertThat(created.getMetadata().getLabels()).as("the ALB's pod readiness gate (helm/README.md, Rollouts)")
                        .containsEntry("elbv2.k8s.aws/pod-readiness-gate-inject", "enabled");
            } else if (step.words().contains("--create-namespace")) {
                namespaces.add(used);
            } else if (step.words().containsAll(List.of("kubectl", "apply"))) {
                CREATED_BY_MANIFEST.forEach((namespace, manifest) -> {
                    if (step.words().stream().anyMatch(w -> w.endsWith("/" + manifest))) {
                        namespaces.add(namespace);
                    }
                });
            }
            if (used != null) {
                assertThat(namespaces).as("namespace of `%s` created before", step.line()).contains(used);
            }
        }
        assertThat(namespaces).contains("supermarket", "monitoring", "cert-manager", "rabbitmq-system");
    }

    @ParameterizedTest(name = "{0} preset, {1} store")
    @CsvSource({"micro, mysql", "xlarge, dynamodb"})
    void everyManifestUpAppliesIsAValidObjectWhoseSecretsExistFirst(String preset, String store) {
        List<Step> steps = dryRun("--preset", preset, "--store", store, "--certificate-arn", CERTIFICATE, "up");
        List<HasMetadata> applied = steps.stream().map(Step::manifest).filter(m -> m != null).toList();
        assertThat(applied).isNotEmpty().allSatisfy(o -> assertThat(o.getMetadata().getName()).isNotBlank());
        assertThat(applied).filteredOn(o -> !(o instanceof Namespace))
                .allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).isEqualTo("supermarket"));

        Set<String> secrets = new HashSet<>();
        for (HasMetadata object : applied) {
            if (object instanceof Secret secret) {
                assertThat(secret.getStringData()).as("values in stringData, never on a command line").isNotEmpty();
                secrets.add(secret.getMetadata().getName());
            } else if (object instanceof Pod pod) {
                Container container = pod.getSpec().getContainers().getFirst();
                HelmChartTest.assertPinned(container.getImage());
                assertThat(container.getEnv()).filteredOn(e -> e.getValueFrom() != null)
                        .extracting(e -> e.getValueFrom().getSecretKeyRef().getName())
                        .as("Secrets the pod reads, applied before it").isSubsetOf(secrets);
                assertThat(container.getEnv()).extracting(EnvVar::getName).contains("MYSQL_PWD");
            }
        }
        assertThat(secrets).contains("supermarket-load-client-keys");
        if (store.equals("mysql")) {
            assertThat(secrets).contains("supermarket-mysql", "supermarket-mysql-migrations");
            assertThat(applied).filteredOn(Pod.class::isInstance).hasSize(1);
        } else {
            assertThat(applied).noneMatch(Pod.class::isInstance);
        }
    }

    @ParameterizedTest(name = "{0} preset")
    @CsvSource({"micro", "xlarge"})
    void installsTheChartWithValuesThatRenderAndAnIdempotencyStore(String preset) {
        List<Step> steps = dryRun("--preset", preset, "--tag", "1.2.3", "--certificate-arn", CERTIFICATE, "up");
        Step install = steps.get(first(steps, s -> s.words().containsAll(List.of("helm", "upgrade", "--install", "supermarket"))));
        assertThat(install.namespace()).isEqualTo("supermarket");
        assertThat(install.words()).contains("helm/supermarket/values-" + preset + ".yaml", "--wait");

        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(
                DeploymentFiles.resolve("helm/supermarket/values-" + preset + ".yaml"), sets(install)));
        Container api = HelmChartTest.container(objects, "purchase-api");
        assertThat(api.getImage()).endsWith("supermarket/purchase-api:1.2.3");
        assertThat(api.getEnv()).filteredOn(e -> e.getName().equals("API_IDEMPOTENCY_REDIS_URL"))
                .singleElement().extracting(EnvVar::getValue).isEqualTo("redis://supermarket-redis:6379/0");
        int helmTest = first(steps, s -> s.words().containsAll(List.of("helm", "test", "supermarket")));
        assertThat(helmTest).isGreaterThan(steps.indexOf(install));
    }

    @Test
    void loadRunsTheClientAsAJobThatKeepsImageAndCommandAndWritesToItsClaim() {
        List<Step> steps = dryRun("--preset", "micro", "--run", "r7", "--stores", "100", "load");
        Step upgrade = steps.get(first(steps, s -> s.words().containsAll(List.of("helm", "upgrade", "supermarket"))));
        assertThat(upgrade.words()).as("the chart's new defaults apply; the release's own values are kept")
                .contains("--reset-then-reuse-values").doesNotContain("--reuse-values");
        Map<String, Object> sets = sets(upgrade);
        sets.put("purchaseApi.image.tag", "1.2.3");
        sets.put("loadClient.image.tag", "1.2.3");

        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(
                DeploymentFiles.resolve("helm/supermarket/values-micro.yaml"), sets));
        Job job = objects.stream().filter(Job.class::isInstance).map(Job.class::cast)
                .filter(j -> "load-client".equals(j.getMetadata().getLabels().get("app.kubernetes.io/component"))).findFirst()
                .orElseThrow(() -> new AssertionError("no load-client Job rendered"));
        assertThat(job.getMetadata().getName()).isEqualTo("supermarket-load-client-r7");
        assertThat(job.getSpec().getBackoffLimit()).as("never re-sends a run's purchases").isZero();
        Container client = job.getSpec().getTemplate().getSpec().getContainers().getFirst();
        assertThat(client.getImage()).isEqualTo("supermarket/load-client:1.2.3");
        assertThat(DockerfileStages.image("load-client"))
                .as("the Job runs the image's own entrypoint").contains("ENTRYPOINT [\"" + String.join("\", \"", client.getCommand()) + "\"]");
        List<String> args = client.getArgs();
        assertThat(args.getFirst()).isEqualTo("run");
        assertThat(args).containsSubsequence("--base-url", "http://supermarket-purchase-api:80")
                .containsSubsequence("--max-stores", "100").containsSubsequence("--label", "r7")
                .containsSubsequence("--out", "/results/r7/result.json")
                .containsSubsequence("--till-keys", "/keys/till-keys.txt");
        assertThat(args).filteredOn(a -> a.startsWith("--")).allSatisfy(
                option -> assertThat(LoadClientCommandsTest.runOptions()).as("load-client run option").contains(option));
        assertThat(client.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/results"));
        PersistentVolumeClaim results = objects.stream().filter(PersistentVolumeClaim.class::isInstance)
                .map(PersistentVolumeClaim.class::cast).findFirst().orElseThrow();
        assertThat(results.getMetadata().getAnnotations()).as("outlives the Job and the release's upgrades")
                .containsEntry("helm.sh/resource-policy", "keep");
        assertThat(job.getSpec().getTemplate().getSpec().getVolumes())
                .anySatisfy(v -> assertThat(v.getPersistentVolumeClaim().getClaimName()).isEqualTo(results.getMetadata().getName()));

        List<Step> fetch = dryRun("--run", "r7", "results");
        Step reader = fetch.get(first(fetch, s -> s.manifest() instanceof Pod));
        assertThat(((Pod) reader.manifest()).getSpec().getVolumes())
                .anySatisfy(v -> assertThat(v.getPersistentVolumeClaim().getClaimName()).isEqualTo(results.getMetadata().getName()));
        int copy = first(fetch, s -> s.words().containsAll(List.of("kubectl", "cp")));
        assertThat(fetch.get(copy).words()).contains("supermarket/supermarket-results-reader:/results/r7");
        assertThat(copy).isGreaterThan(first(fetch, s -> s.words().contains("--for=condition=Ready")));
    }

    @Test
    void downDeletesEveryClaimAndWaitsForTheVolumesBeforeTerraformDestroys() {
        List<Step> steps = dryRun("--skip-final-snapshot", "down");
        int uninstall = first(steps, s -> s.words().containsAll(List.of("helm", "uninstall", "supermarket")));
        int claims = first(steps, s -> s.words().containsAll(List.of("kubectl", "delete", "pvc", "--all"))
                && "supermarket".equals(s.namespace()));
        int volumes = first(steps, s -> s.line().startsWith("+ wait_until") && s.words().contains("no_volumes_left"));
        int controller = first(steps, s -> s.words().containsAll(List.of("uninstall", "aws-load-balancer-controller")));
        int destroy = first(steps, s -> s.words().containsAll(List.of("terraform", "-chdir=terraform", "destroy")));
        int unprotect = first(steps, s -> s.words().contains("apply") && s.words().contains("rds_deletion_protection=false"));

        assertThat(List.of(uninstall, claims, volumes, controller, unprotect, destroy)).as("teardown order").isSorted();
        assertThat(steps.get(destroy).words()).contains("rds_skip_final_snapshot=true");
        assertThat(steps).filteredOn(s -> s.words().contains("kubectl")
                        && (s.words().contains("wait") || s.words().contains("delete")))
                .as("every wait is bounded").allSatisfy(s -> assertThat(s.words()).anyMatch(w -> w.startsWith("--timeout")));
        assertThat(steps.get(volumes).line()).as("bounded").matches("\\+ wait_until [0-9]+s: .*");
    }

    @Test
    void refusesToStartWhenTheVcpuQuotaIsBelowWhatThePresetMayGrowTo(@TempDir Path dir) throws Exception {
        Path aws = dir.resolve("aws");
        Files.writeString(aws, """
                #!/bin/bash
                case "$*" in
                  *describe-instance-types*m5.xlarge*) echo 4 ;;
                  *get-service-quota*L-1216C47A*) echo "$QUOTA" ;;
                  *) echo "unexpected aws $*" >&2; exit 3 ;;
                esac
                """);
        Files.setPosixFilePermissions(aws, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = Map.of("PATH", dir + ":" + System.getenv("PATH"));

        Result refused = exec(List.of("bash", SCRIPT.toString(), "--preset", "xlarge", "quota"), merge(env, "QUOTA", "16.0"));
        assertThat(refused.status()).isEqualTo(1);
        assertThat(refused.output()).contains("refusing", "9 x m5.xlarge = 36 vCPUs", "L-1216C47A", "is 16 vCPUs",
                "--desired-value 36");

        Result allowed = exec(List.of("bash", SCRIPT.toString(), "--preset", "xlarge", "quota"), merge(env, "QUOTA", "36.0"));
        assertThat(allowed.status()).as(allowed.output()).isZero();
    }

    @Test
    void aRealRunExecutesExactlyWhatTheDryRunPrints(@TempDir Path dir) throws Exception {
        Path bin = standIns(dir);
        Path log = dir.resolve("transcript");
        // Keys for two stores, issued beforehand (eks.sh issues the preset's 512 only when none exist).
        Path keys = dir.resolve("keys");
        assertThat(exec(List.of("bash", DeploymentFiles.resolve("scripts/till-keys.sh").toString(), "issue", "--dir",
                keys.toString(), "--stores", "1-2"), Map.of()).status()).isZero();
        List<String> args = List.of("--preset", "micro", "--store", "mysql", "--skip-images", "--keys", keys.toString(),
                "--certificate-arn", CERTIFICATE, "up");
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(args);

        Result real = exec(command, Map.of("PATH", bin + ":" + System.getenv("PATH"), "EKS_LOG", log.toString()));
        assertThat(real.status()).as(real.output()).isZero();

        List<String> printed = new ArrayList<>();
        for (Step step : dryRun(args.toArray(String[]::new))) {
            // A pipeline's stages, of the stand-in tools only (the rest runs for real here).
            String line = step.line().replaceFirst("^\\+ retry [0-9]+x[0-9]+s: ", "+ ");
            for (String stage : (step.manifest() == null ? line : line.replace(" <<EOF", "")).substring(2).split(" \\| ")) {
                if (List.of("aws", "terraform", "kubectl", "helm").contains(stage.split(" ")[0])) {
                    printed.add(step.manifest() == null ? stage : stage + " <<EOF " + SERIALIZATION.asJson(step.manifest()));
                }
            }
        }
        List<String> executed = new ArrayList<>();
        String[] lines = Files.readString(log).split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].endsWith("<<EOF")) {
                HasMetadata manifest = SERIALIZATION.unmarshal(lines[++i], HasMetadata.class);
                i++;
                if (manifest instanceof Secret secret && secret.getMetadata().getName().equals("supermarket-load-client-keys")) {
                    assertThat(secret.getStringData()).as("every store's key, quoted safely")
                            .containsEntry("till-keys.txt", Files.readString(keys.resolve("till-keys.txt")).stripTrailing());
                    secret.getStringData().put("till-keys.txt", "<" + keys.resolve("till-keys.txt") + ">");
                }
                executed.add(lines[i - 2].substring(2).replace(" <<EOF", "") + " <<EOF " + SERIALIZATION.asJson(manifest));
            } else {
                executed.add(lines[i].substring(2));
            }
        }
        assertThat(executed).as("what a real run executes").containsExactlyElementsOf(printed);
    }


    @Test
    void upRollsTheStoreCopiesOneAfterTheOtherAndTestsOnceAllAreUpgraded() {
        List<Step> steps = dryRun("--preset", "xlarge", "--certificate-arn", CERTIFICATE, "up");
        List<Integer> upgrades = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).words().containsAll(List.of("helm", "upgrade", "--install", "supermarket"))) {
                upgrades.add(i);
            }
        }
        // values-xlarge.yaml: copies 2. Copy 1 first (copy 0 held at its revision), then copy 0: a
        // copy added by this upgrade is placed while copy 0 stays where it is.
        assertThat(upgrades).hasSize(2);
        assertThat(steps.get(upgrades.get(0)).words()).contains("storeService.upgradeCopies=1", "--wait");
        assertThat(steps.get(upgrades.get(1)).words()).as("the last upgrade holds nothing, and leaves no hold in the release's values")
                .noneMatch(w -> w.startsWith("storeService.upgradeCopies"));
        int copy0 = first(steps, s -> s.words().containsAll(List.of("kubectl", "rollout", "status", "statefulset/supermarket-store-service")));
        int copy1 = first(steps, s -> s.words().containsAll(List.of("kubectl", "rollout", "status", "statefulset/supermarket-store-service-c1")));
        int helmTest = first(steps, s -> s.words().containsAll(List.of("helm", "test", "supermarket")));
        assertThat(List.of(upgrades.get(0), copy1, upgrades.get(1), copy0, helmTest)).as("one copy at a time").isSorted();
        assertThat(steps.get(copy0).words()).anyMatch(w -> w.startsWith("--timeout"));
    }

    @ParameterizedTest(name = "live Service cluster IP {0}, StatefulSets {1}")
    @CsvSource({"10.100.7.7, OrderedReady OrderedReady, true, true", "None, OrderedReady, false, true",
            "None, Parallel Parallel, false, false", "'', '', false, false"})
    void upDeletesWhatKubernetesCannotChangeInPlaceBeforeUpgradingARelease(String clusterIp, String policies,
            boolean deletesService, boolean orphansStatefulSets, @TempDir Path dir) throws Exception {
        Path keys = dir.resolve("keys");
        assertThat(exec(List.of("bash", DeploymentFiles.resolve("scripts/till-keys.sh").toString(), "issue", "--dir",
                keys.toString(), "--stores", "1-2"), Map.of()).status()).isZero();
        Result run = realRun(dir, """
                case "$name $*" in
                  "kubectl get service supermarket-store-service "*) printf '%s' '%CLUSTER_IP%'; exit 0 ;;
                  "kubectl get statefulset "*podManagementPolicy*) printf '%s' '%POLICIES%'; exit 0 ;;
                esac
                """.replace("%CLUSTER_IP%", clusterIp).replace("%POLICIES%", policies),
                "--preset", "xlarge", "--skip-images", "--keys", keys.toString(), "--certificate-arn", CERTIFICATE, "up");
        assertThat(run.status()).as(run.output()).isZero();

        List<String> commands = executed(dir);
        int upgrade = firstLine(commands, c -> c.startsWith("+ helm upgrade --install supermarket"));
        Predicate<String> deleteService = c -> c.startsWith("+ kubectl delete service supermarket-store-service -n supermarket");
        Predicate<String> orphan = c -> c.startsWith("+ kubectl delete statefulset -n supermarket")
                && c.contains("--cascade=orphan") && c.contains("app.kubernetes.io/component=store-service");
        assertThat(commands.stream().anyMatch(deleteService)).as("chart 0.3's headless Service over a cluster IP").isEqualTo(deletesService);
        assertThat(commands.stream().anyMatch(orphan)).as("chart 0.4's podManagementPolicy").isEqualTo(orphansStatefulSets);
        if (deletesService) {
            assertThat(firstLine(commands, deleteService)).isLessThan(upgrade);
        }
        if (orphansStatefulSets) {
            assertThat(firstLine(commands, orphan)).isLessThan(upgrade);
            assertThat(commands).noneMatch(c -> c.contains("delete pvc") || c.contains("delete pod"));
        }
    }

    @ParameterizedTest(name = "{0} store")
    @CsvSource({"mysql", "dynamodb"})
    void upGivesTheChartAChecksumOfEverySecretThePodsReadSoARotatedPasswordRollsThem(String store) {
        List<Step> steps = dryRun("--preset", "micro", "--store", store, "--certificate-arn", CERTIFICATE, "up");
        Step install = steps.get(first(steps, s -> s.words().containsAll(List.of("helm", "upgrade", "--install", "supermarket"))));
        Map<String, Object> sets = sets(install);
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(
                DeploymentFiles.resolve("helm/supermarket/values-micro.yaml"), sets));
        int annotated = 0;
        for (HelmChartTest.Workload workload : HelmChartTest.workloads(objects)) {
            for (Map.Entry<String, String> annotation : workload.template().getMetadata().getAnnotations().entrySet()) {
                if (annotation.getKey().startsWith("checksum/secret-")) {
                    String secret = annotation.getKey().substring("checksum/secret-".length());
                    assertThat(annotation.getValue()).as("%s on %s", annotation.getKey(), workload.name())
                            .matches("[0-9a-f]{64}").isEqualTo(sets.get("secretChecksums." + secret));
                    int read = first(steps, s -> s.words().containsAll(List.of("kubectl", "get", "secret", secret))
                            && s.words().contains("jsonpath={.data}"));
                    assertThat(read).as("read before the upgrade").isLessThan(steps.indexOf(install));
                    annotated++;
                }
            }
        }
        assertThat(annotated).isGreaterThanOrEqualTo(store.equals("mysql") ? 5 : 3);
    }

    @Test
    void loadRefusesToUpgradeAReleaseOfAnotherChartVersion(@TempDir Path dir) throws Exception {
        Result run = realRun(dir, """
                case "$name $*" in
                  "helm list "*) echo '[{"name":"supermarket","chart":"supermarket-0.2.0"}]'; exit 0 ;;
                esac
                """, "--run", "r1", "load");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.output()).contains("supermarket-0.2.0", "scripts/eks.sh up");
        assertThat(executed(dir)).noneMatch(c -> c.startsWith("+ helm upgrade"));
    }

    @Test
    void upRefusesToSendTillKeysOverPlainHttpUnlessTold() {
        Result refused = exec(List.of("bash", SCRIPT.toString(), "--dry-run", "--inbound-cidr", "203.0.113.0/24", "up"), Map.of());
        assertThat(refused.status()).isEqualTo(1);
        assertThat(refused.output()).contains("--certificate-arn", "--insecure-http").doesNotContain("+ terraform");

        List<Step> steps = dryRun("--insecure-http", "--inbound-cidr", "203.0.113.0/24", "up");
        Step install = steps.get(first(steps, s -> s.words().containsAll(List.of("helm", "upgrade", "--install", "supermarket"))));
        assertThat(install.words()).contains("purchaseApi.ingress.inboundCidrs={203.0.113.0/24}")
                .noneMatch(w -> w.startsWith("purchaseApi.ingress.certificateArn"));
        Step withCertificate = dryRun("--certificate-arn", CERTIFICATE, "up").stream()
                .filter(s -> s.words().containsAll(List.of("helm", "upgrade", "--install", "supermarket"))).findFirst().orElseThrow();
        assertThat(withCertificate.words()).contains("purchaseApi.ingress.certificateArn=" + CERTIFICATE);
    }

    @Test
    void upRetriesTheOperatorsWhileCertManagersWebhookCannotServeYet() {
        List<Step> steps = dryRun("--certificate-arn", CERTIFICATE, "up");
        for (String manifest : List.of("/cluster-operator.yml", "/messaging-topology-operator-with-certmanager.yaml")) {
            Step apply = steps.get(first(steps, s -> s.words().contains("apply") && s.words().stream().anyMatch(w -> w.endsWith(manifest))));
            assertThat(apply.line()).as("bounded retries of " + manifest).matches("\\+ retry [0-9]+x[0-9]+s: kubectl apply .*");
        }
        int certManager = first(steps, s -> s.words().contains("apply") && s.words().stream().anyMatch(w -> w.endsWith("/cert-manager.yaml")));
        int clusterOperator = first(steps, s -> s.line().startsWith("+ retry") && s.line().contains("cluster-operator.yml"));
        assertThat(certManager).isLessThan(clusterOperator);
    }

    @Test
    void upKeepsTheRdsMasterPasswordOutOfTheCluster() {
        List<Step> steps = dryRun("--preset", "micro", "--store", "mysql", "--certificate-arn", CERTIFICATE, "up");
        Map<String, Integer> master = new LinkedHashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).manifest() instanceof Secret secret && secret.getStringData().containsValue("<master password>")) {
                master.put(secret.getMetadata().getName(), i);
            }
        }
        assertThat(master).as("the master password reaches the admin pod only").hasSize(1);
        String name = master.keySet().iterator().next();
        assertThat(name).isNotIn("supermarket-mysql", "supermarket-mysql-migrations");
        int admin = first(steps, s -> s.manifest() instanceof Pod);
        int done = first(steps, s -> s.words().contains("pod/mysql-admin") && s.words().contains("wait"));
        int deleted = first(steps, s -> s.words().containsAll(List.of("kubectl", "delete", "secret", name)));
        assertThat(List.of(master.get(name), admin, done, deleted)).isSorted();

        Secret migrations = steps.stream().map(Step::manifest).filter(Secret.class::isInstance).map(Secret.class::cast)
                .filter(s -> s.getMetadata().getName().equals("supermarket-mysql-migrations")).findFirst().orElseThrow();
        assertThat(migrations.getStringData()).containsEntry("username", "migrations")
                .doesNotContainValue("<master user>").doesNotContainValue("<master password>");
        String sql = String.join(" ", ((Pod) steps.get(admin).manifest()).getSpec().getContainers().getFirst().getCommand());
        assertThat(sql).contains("GRANT ALL PRIVILEGES ON purchases.* TO 'migrations'", "GRANT SELECT, INSERT ON purchases.* TO 'purchases'");
    }

    @Test
    void keysPublishesTheHashesHelmTestsKeyAndTheLoadClientsKeys() {
        List<Step> steps = dryRun("keys");
        assertThat(steps).anySatisfy(s -> assertThat(s.line()).startsWith("+ scripts/till-keys.sh secret")
                .contains("--test-store 1").endsWith("| kubectl apply -f -"));
        assertThat(steps).anySatisfy(s -> assertThat(s.manifest()).isInstanceOfSatisfying(Secret.class,
                secret -> assertThat(secret.getMetadata().getName()).isEqualTo("supermarket-load-client-keys")));
        assertThat(steps).noneMatch(s -> s.words().contains("terraform") || s.words().contains("helm"));

        // The documented rotation publishes all three (a key of store 1 rotated but not re-sent to
        // helm test or the load client answers 401 once the grace period is over).
        String operations = DeploymentFiles.read("docs/operations.md");
        String rotation = operations.substring(operations.indexOf("## Till keys: issue and rotate"));
        rotation = rotation.substring(0, rotation.indexOf("\n## ", 5));
        assertThat(rotation).contains("scripts/eks.sh keys");
        assertThat(rotation.lines().filter(l -> l.startsWith("scripts/till-keys.sh secret")))
                .isNotEmpty().allSatisfy(l -> assertThat(l).contains("--test-store"));
        assertThat(rotation).contains("supermarket-load-client-keys");
    }

    @Test
    void downReachesTerraformDestroyWhenTheClusterNeverCameUp(@TempDir Path dir) throws Exception {
        Result run = realRun(dir, """
                case "$name $*" in
                  "aws eks update-kubeconfig "*) echo "An error occurred (ResourceNotFoundException)" >&2; exit 254 ;;
                  kubectl*|helm*) echo "must not reach whatever cluster is current" >&2; exit 1 ;;
                esac
                """, "down");
        assertThat(run.status()).as(run.output()).isZero();
        List<String> commands = executed(dir);
        assertThat(commands).noneMatch(c -> c.startsWith("+ kubectl") || c.startsWith("+ helm"));
        assertThat(commands).anyMatch(c -> c.startsWith("+ terraform -chdir=terraform destroy"));
    }

    @Test
    void downGoesOnToTerraformDestroyPastFailedCleanupStepsAndSaysWhichFailed(@TempDir Path dir) throws Exception {
        Result run = realRun(dir, """
                case "$name $*" in
                  "kubectl get pv "*) exit 0 ;;
                  kubectl*|helm*) echo "error: the server has asked for the client to provide credentials" >&2; exit 1 ;;
                esac
                """, "down");
        assertThat(run.status()).as("a cleanup step failed: volumes or an ALB may be left").isEqualTo(1);
        List<String> commands = executed(dir);
        int kubeconfig = firstLine(commands, c -> c.startsWith("+ aws eks update-kubeconfig"));
        int uninstall = firstLine(commands, c -> c.startsWith("+ helm uninstall supermarket"));
        int destroy = firstLine(commands, c -> c.startsWith("+ terraform -chdir=terraform destroy"));
        assertThat(List.of(kubeconfig, uninstall, destroy)).isSorted();
        assertThat(commands).anyMatch(c -> c.startsWith("+ kubectl delete pvc --all"));
        assertThat(run.output()).contains("failed", "helm uninstall supermarket", "kubectl delete pvc");
    }

    @Test
    void upPutsRdsInTerraformOnlyForTheMysqlStore() {
        for (String store : List.of("mysql", "dynamodb")) {
            List<Step> steps = dryRun("--preset", "xlarge", "--store", store, "--certificate-arn", CERTIFICATE, "up");
            Step apply = steps.get(first(steps, s -> s.words().containsAll(List.of("terraform", "-chdir=terraform", "apply"))));
            assertThat(apply.words()).contains("purchases_store=" + store);
        }
    }

    @Test
    void anElasticacheUrlFromTerraformReplacesTheInClusterRedis() {
        List<Step> steps = dryRun("--preset", "xlarge", "--certificate-arn", CERTIFICATE, "up");
        Step install = steps.get(first(steps, s -> s.words().containsAll(List.of("helm", "upgrade", "--install", "supermarket"))));
        Map<String, Object> values = sets(install);
        // What Terraform's helm_values (values-<region>.yaml, layered after the preset) says with idempotency_elasticache.
        values.put("purchaseApi.idempotency.redisUrl", "rediss://master.supermarket-idempotency.abc.use1.cache.amazonaws.com:6379/0");
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(
                DeploymentFiles.resolve("helm/supermarket/values-xlarge.yaml"), values));
        assertThat(objects).noneMatch(o -> o.getMetadata().getName().startsWith("supermarket-redis"));
        assertThat(HelmChartTest.container(objects, "purchase-api").getEnv())
                .filteredOn(e -> e.getName().equals("API_IDEMPOTENCY_REDIS_URL")).singleElement()
                .extracting(EnvVar::getValue).asString().startsWith("rediss://");
    }

    /**
     * Stand-ins for the four tools that touch AWS or the cluster, in {@code dir/bin}: each records
     * its command line (and a manifest on its standard input) in {@code $EKS_LOG} as --dry-run
     * prints it, and answers as the placeholders of --dry-run read, so the two transcripts can be
     * compared word for word. {@code $EKS_STUB_EXTRA}, if set, is sourced first: a test's own
     * answers ({@code $name} is the tool, {@code $*} its arguments).
     */
    private static Path standIns(Path dir) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        String stub = """
                #!/bin/bash
                name=$(basename "$0")
                if [[ "$name $1 $2 $3" == "kubectl apply -f -" ]]; then
                  manifest=$(cat)
                  if json=$(jq -c . <<<"$manifest" 2>/dev/null); then
                    printf '+ kubectl apply -f - <<EOF\n%s\nEOF\n' "$json" >>"$EKS_LOG"
                    exit 0
                  fi
                fi
                { printf '+ %s' "$name"; printf ' %q' "$@"; printf '\n'; } >>"$EKS_LOG"
                if [[ -n "${EKS_STUB_EXTRA:-}" ]]; then
                  source "$EKS_STUB_EXTRA"
                fi
                case "$name $*" in
                  "terraform -chdir=terraform output -raw "*) printf '<terraform output %s>' "${@: -1}" ;;
                  *describe-instance-types*) echo 2 ;;
                  *get-service-quota*) echo 100.0 ;;
                  *secretsmanager*) echo '{"username":"<master user>","password":"<master password>"}' ;;
                  "kubectl get secret "*"jsonpath={.data}") printf "<%s's data>" "$3" ;;
                  "kubectl get secret supermarket-mysql "*) printf '%s %s' "$(printf purchases | base64)" "$(printf '<generated>' | base64)" ;;
                  "kubectl get secret supermarket-mysql-migrations "*) printf '%s %s' "$(printf migrations | base64)" "$(printf '<generated>' | base64)" ;;
                esac
                """;
        for (String tool : List.of("aws", "terraform", "kubectl", "helm")) {
            Files.writeString(bin.resolve(tool), stub);
            Files.setPosixFilePermissions(bin.resolve(tool), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return bin;
    }

    /** A real run of eks.sh with the stand-ins of {@link #standIns} and a test's own answers. */
    private static Result realRun(Path dir, String answers, String... args) throws IOException {
        Path bin = standIns(dir);
        Path extra = dir.resolve("answers.sh");
        Files.writeString(extra, answers);
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(List.of(args));
        return exec(command, Map.of("PATH", bin + ":" + System.getenv("PATH"), "EKS_LOG", dir.resolve("transcript").toString(),
                "EKS_STUB_EXTRA", extra.toString()));
    }

    /** The commands a real run of {@link #realRun} executed, one line each, manifests as their JSON line. */
    private static List<String> executed(Path dir) throws IOException {
        Path log = dir.resolve("transcript");
        return Files.exists(log) ? List.of(Files.readString(log).split("\n")) : List.of();
    }

    private static int firstLine(List<String> lines, Predicate<String> what) {
        for (int i = 0; i < lines.size(); i++) {
            if (what.test(lines.get(i))) {
                return i;
            }
        }
        throw new AssertionError("no such command in the transcript:\n" + String.join("\n", lines));
    }

    private static List<Step> dryRun(String... args) {
        return ScriptTranscript.dryRun(SCRIPT, args);
    }

    private static Result exec(List<String> command, Map<String, String> env) {
        return ScriptTranscript.exec(command, env);
    }

    /** The {@code --set k=v} pairs of a helm command, for helm-java's template. */
    private static Map<String, Object> sets(Step helm) {
        Map<String, Object> sets = new LinkedHashMap<>();
        for (int i = 0; i < helm.words().size() - 1; i++) {
            if (helm.words().get(i).equals("--set") || helm.words().get(i).equals("--set-string")) {
                String pair = helm.words().get(i + 1);
                String key = pair.substring(0, pair.indexOf('='));
                String value = pair.substring(pair.indexOf('=') + 1);
                if (value.startsWith("{") && value.endsWith("}")) {
                    // Helm's list syntax, which helm-java's set passes as a string: as indexed keys.
                    String[] items = value.substring(1, value.length() - 1).split(",");
                    for (int j = 0; j < items.length; j++) {
                        sets.put(key + "[" + j + "]", items[j]);
                    }
                } else {
                    sets.put(key, value);
                }
            }
        }
        return sets;
    }

    private static int first(List<Step> steps, Predicate<Step> what) {
        for (int i = 0; i < steps.size(); i++) {
            if (what.test(steps.get(i))) {
                return i;
            }
        }
        throw new AssertionError("no such step in the transcript:\n" + String.join("\n", steps.stream().map(Step::line).toList()));
    }

    private static Map<String, String> merge(Map<String, String> env, String key, String value) {
        Map<String, String> merged = new LinkedHashMap<>(env);
        merged.put(key, value);
        return merged;
    }
}
