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
        List<Step> steps = dryRun("--preset", preset, "--store", store, "up");

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
        List<Step> steps = dryRun("--preset", preset, "--store", store, "up");
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
        List<Step> steps = dryRun("--preset", preset, "--tag", "1.2.3", "up");
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
        Step upgrade = steps.get(first(steps, s -> s.words().containsAll(List.of("helm", "upgrade", "--reuse-values"))));
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
        // Stand-ins for the four tools that touch AWS or the cluster: each records its command line
        // (and a manifest on its standard input) as --dry-run prints it, and answers as the
        // placeholders of --dry-run read, so the two transcripts can be compared word for word.
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path log = dir.resolve("transcript");
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
                case "$name $*" in
                  "terraform -chdir=terraform output -raw "*) printf '<terraform output %s>' "${@: -1}" ;;
                  *describe-instance-types*) echo 2 ;;
                  *get-service-quota*) echo 100.0 ;;
                  *secretsmanager*) echo '{"username":"<master user>","password":"<master password>"}' ;;
                  "kubectl get secret supermarket-mysql "*) printf '<generated>' | base64 ;;
                esac
                """;
        for (String tool : List.of("aws", "terraform", "kubectl", "helm")) {
            Files.writeString(bin.resolve(tool), stub);
            Files.setPosixFilePermissions(bin.resolve(tool), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        // Keys for two stores, issued beforehand (eks.sh issues the preset's 512 only when none exist).
        Path keys = dir.resolve("keys");
        assertThat(exec(List.of("bash", DeploymentFiles.resolve("scripts/till-keys.sh").toString(), "issue", "--dir",
                keys.toString(), "--stores", "1-2"), Map.of()).status()).isZero();
        List<String> args = List.of("--preset", "micro", "--store", "mysql", "--skip-images", "--keys", keys.toString(), "up");
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(args);

        Result real = exec(command, Map.of("PATH", bin + ":" + System.getenv("PATH"), "EKS_LOG", log.toString()));
        assertThat(real.status()).as(real.output()).isZero();

        List<String> printed = new ArrayList<>();
        for (Step step : dryRun(args.toArray(String[]::new))) {
            // A pipeline's stages, of the stand-in tools only (the rest runs for real here).
            for (String stage : (step.manifest() == null ? step.line() : step.line().replace(" <<EOF", "")).substring(2).split(" \\| ")) {
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
            if (helm.words().get(i).equals("--set")) {
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
