package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Secrets the chart's pods read, and what the docs say about them: every Secret a service's
 * pod reads through its environment carries a checksum annotation on the pod template, its value
 * given at each upgrade (secretChecksums, which scripts/eks.sh reads from the live Secrets), so a
 * changed password rolls exactly its readers (the till keys' Secret is mounted and reread, so it
 * has none); k8s/README names every Secret the plain manifests need
 * that nothing else creates; deploy/README says what the chart renders for the broker settings.
 */
class ChartSecretsTest {

    private static final String CHECKSUM = "checksum/secret-";

    @ParameterizedTest(name = "{0} store, broker service users {1}")
    @CsvSource({"mysql, true", "mysql, false", "dynamodb, true"})
    void everyServicePodCarriesAChecksumOfEachSecretInItsEnvironment(String store, boolean serviceUsers) {
        Map<String, Object> values = new LinkedHashMap<>(Map.of(
                "persistence.store", store, "rabbitmq.serviceUsers.enabled", String.valueOf(serviceUsers)));
        List<HelmChartTest.Workload> unset = HelmChartTest.workloads(HelmChart.objects(HelmChart.template(null, values)));
        assertThat(unset).extracting(HelmChartTest.Workload::name).contains("supermarket-purchase-api",
                "supermarket-purchases-service", "supermarket-store-service");
        Set<String> read = new TreeSet<>();
        for (HelmChartTest.Workload workload : unset) {
            Set<String> secrets = secretsInEnvironment(workload.template().getSpec());
            assertThat(secrets).as("Secrets %s reads", workload.name()).isNotEmpty();
            assertThat(checksums(workload).keySet()).as("checksums on the pods of %s", workload.name()).isEqualTo(secrets);
            assertThat(checksums(workload)).as("none given").allSatisfy((secret, sum) -> assertThat(sum).isEmpty());
            assertThat(workload.template().getMetadata().getAnnotations())
                    .as("the till keys are reread from the mount: a rotation rolls nothing")
                    .doesNotContainKey(CHECKSUM + "supermarket-till-keys");
            read.addAll(secrets);
        }
        if (store.equals("mysql")) {
            assertThat(read).contains("supermarket-mysql", "supermarket-mysql-migrations");
        }

        // Each Secret's checksum on exactly its readers: a new one rolls them and no other pod.
        read.forEach(secret -> values.put("secretChecksums." + secret, sha256(secret)));
        Map<String, HelmChartTest.Workload> given = byName(HelmChart.objects(HelmChart.template(null, values)));
        given.values().forEach(w -> checksums(w).forEach((secret, sum) -> assertThat(sum).isEqualTo(sha256(secret))));
        String rotated = read.stream().filter(s -> s.endsWith("-user-credentials") || s.endsWith("-default-user"))
                .findFirst().orElseThrow();
        values.put("secretChecksums." + rotated, sha256("rotated"));
        Map<String, HelmChartTest.Workload> after = byName(HelmChart.objects(HelmChart.template(null, values)));
        given.forEach((name, before) -> assertThat(after.get(name).template().equals(before.template()))
                .as("%s's pod template unchanged", name)
                .isEqualTo(!secretsInEnvironment(before.template().getSpec()).contains(rotated)));
    }

    private static Map<String, String> checksums(HelmChartTest.Workload workload) {
        Map<String, String> checksums = new TreeMap<>();
        workload.template().getMetadata().getAnnotations().forEach((key, value) -> {
            if (key.startsWith(CHECKSUM)) {
                checksums.put(key.substring(CHECKSUM.length()), value);
            }
        });
        return checksums;
    }

    private static Map<String, HelmChartTest.Workload> byName(List<HasMetadata> objects) {
        Map<String, HelmChartTest.Workload> workloads = new TreeMap<>();
        HelmChartTest.workloads(objects).forEach(w -> workloads.put(w.name(), w));
        return workloads;
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theKubernetesReadmeNamesEverySecretTheManifestsNeedThatNothingCreates() throws IOException {
        Set<String> needed = new TreeSet<>();
        Set<String> created = new TreeSet<>();
        try (Stream<Path> files = Files.list(KubernetesManifestsTest.K8S)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
                for (HasMetadata object : HelmChart.objects(Files.readString(file))) {
                    if (object.getKind().equals("Secret")) {
                        created.add(object.getMetadata().getName());
                    }
                    podSpec(object).ifPresent(spec -> {
                        needed.addAll(secretsInEnvironment(spec));
                        spec.getVolumes().stream().map(Volume::getSecret).filter(v -> v != null)
                                .forEach(v -> needed.add(v.getSecretName()));
                    });
                }
            }
        }
        // The operators write these: the RabbitmqCluster's default user, each broker User's credentials.
        needed.removeIf(name -> name.endsWith("-default-user") || name.endsWith("-user-credentials"));
        needed.removeAll(created);

        String readme = DeploymentFiles.read("k8s/README.md");
        assertThat(needed).contains("supermarket-mysql", "supermarket-mysql-migrations", "supermarket-till-keys");
        for (String secret : needed) {
            assertThat(readme).as("k8s/README.md tells how to create the Secret " + secret).contains(secret);
        }
    }

    @Test
    void theDeployReadmeSaysWhatTheChartRendersForTheBrokerSettings() {
        String readme = DeploymentFiles.read("deploy/README.md");
        int start = readme.indexOf("- **Policies**");
        assertThat(start).as("deploy/README.md's Policies item").isNotNegative();
        String item = readme.substring(start, readme.indexOf("\n- ", start + 1));
        ConfigMap config = HelmChartTest.ofKind(HelmChart.objects(HelmChart.template(null, Map.of())), ConfigMap.class).stream()
                .filter(c -> c.getMetadata().getName().equals("supermarket-config")).findFirst().orElseThrow();

        Matcher setting = Pattern.compile("`(BROKER_[A-Z_]+)=([a-z]+)`").matcher(item);
        List<String> said = new ArrayList<>();
        while (setting.find()) {
            said.add(setting.group(1));
            assertThat(config.getData()).as("what the chart renders for %s", setting.group(1))
                    .containsEntry(setting.group(1), setting.group(2));
        }
        assertThat(said).contains("BROKER_MANAGE_POLICIES");
    }

    /** Names of the Secrets a pod's containers and init containers read through env (secretKeyRef, secretRef). */
    private static Set<String> secretsInEnvironment(PodSpec spec) {
        Set<String> names = new TreeSet<>();
        List<Container> containers = new ArrayList<>(spec.getContainers());
        containers.addAll(spec.getInitContainers());
        for (Container container : containers) {
            for (EnvVar env : container.getEnv()) {
                if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
                    names.add(env.getValueFrom().getSecretKeyRef().getName());
                }
            }
            container.getEnvFrom().stream().filter(e -> e.getSecretRef() != null).forEach(e -> names.add(e.getSecretRef().getName()));
        }
        return names;
    }

    private static Optional<PodSpec> podSpec(HasMetadata object) {
        PodTemplateSpec template = switch (object) {
            case Deployment d -> d.getSpec().getTemplate();
            case StatefulSet s -> s.getSpec().getTemplate();
            case Job j -> j.getSpec().getTemplate();
            default -> null;
        };
        return Optional.ofNullable(template).map(PodTemplateSpec::getSpec);
    }
}
