package com.supermarket.deployment;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The chart in {@code helm/supermarket}, driven offline through helm-java (Helm as a bundled
 * native library): lint and template, the output split per source template and parsed into
 * fabric8's typed Kubernetes objects. Stateless; thread-safe as far as helm-java is.
 */
final class HelmChart {

    /** The release name the k8s/ manifests are rendered with. */
    static final String RELEASE = "supermarket";

    /**
     * The Kubernetes version rendered for: the EKS version Terraform creates by default
     * (variable {@code cluster_version}); Helm's own default (1.20) predates the chart's minimum.
     */
    static final String KUBE_VERSION = "1.35.0";

    static final Path CHART = DeploymentFiles.resolve("helm/supermarket");

    private static final Pattern SOURCE = Pattern.compile("^# Source: (\\S+)$", Pattern.MULTILINE);

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private HelmChart() {
    }

    /** The preset for the local cluster of scripts/k8s-local.sh (no cloud: no ALB, no Terraform nodes). */
    static final Path LOCAL_VALUES = CHART.resolve("values-local.yaml");

    /** The chart's values files besides values.yaml: the EKS instance-size presets and the local one. */
    static List<Path> valuesFiles() {
        try (Stream<Path> files = Files.list(CHART)) {
            return files.filter(f -> f.getFileName().toString().matches("values-.+\\.yaml")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The EKS presets: every values file but the local one, each for the nodes of a Terraform preset. */
    static List<Path> eksValuesFiles() {
        return valuesFiles().stream().filter(f -> !f.equals(LOCAL_VALUES)).toList();
    }

    /**
     * {@code helm lint --strict} with {@code valuesFile} layered over the defaults (null: the
     * defaults alone). helm-java's lint takes no values file, so the chart is copied with the
     * merged values as its values.yaml, which is what Helm itself lints against.
     */
    static LintResult lintStrict(Path valuesFile) {
        if (valuesFile == null) {
            return new Helm(CHART).lint().strict().call();
        }
        Path copy = copyChart(valuesFile);
        try {
            return new Helm(copy).lint().strict().call();
        } finally {
            deleteRecursively(copy.getParent());
        }
    }

    /** {@code helm template supermarket helm/supermarket [-f valuesFile] [--set k=v ...]}. */
    static String template(Path valuesFile, Map<String, Object> sets) {
        var command = new Helm(CHART).template().withName(RELEASE).withKubeVersion(KUBE_VERSION);
        if (valuesFile != null) {
            command = command.withValuesFile(valuesFile);
        }
        for (var set : sets.entrySet()) {
            command = command.set(set.getKey(), set.getValue());
        }
        return command.call();
    }

    /**
     * The chart's {@code helm test} hooks, rendered. helm-java's template leaves hooks out of
     * its output, so they are rendered from a copy of the chart where they are plain templates
     * (the hook annotation renamed to {@value #HOOK_MARKER}, which the caller can check for).
     */
    static String templateTestHooks(Path valuesFile) {
        return templateTestHooks(valuesFile, Map.of());
    }

    /** As {@link #templateTestHooks(Path)}, with {@code --set k=v ...}. */
    static String templateTestHooks(Path valuesFile, Map<String, Object> sets) {
        Path copy = copyChart(valuesFile);
        String rendered;
        try (Stream<Path> tests = Files.list(copy.resolve("templates/tests"))) {
            for (Path test : tests.toList()) {
                String text = Files.readString(test).replace("helm.sh/hook:", HOOK_MARKER + ":");
                Files.writeString(copy.resolve("templates").resolve("hook-" + test.getFileName()), text);
                Files.delete(test);
            }
            var command = new Helm(copy).template().withName(RELEASE).withKubeVersion(KUBE_VERSION);
            for (var set : sets.entrySet()) {
                command = command.set(set.getKey(), set.getValue());
            }
            rendered = command.call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            deleteRecursively(copy.getParent());
        }
        StringBuilder hooks = new StringBuilder();
        documentsBySource(rendered).forEach((source, body) -> {
            if (source.contains("/templates/hook-")) {
                hooks.append("---\n# Source: ").append(source).append('\n').append(body);
            }
        });
        return hooks.toString();
    }

    /** The annotation key standing for {@code helm.sh/hook} in {@link #templateTestHooks}. */
    static final String HOOK_MARKER = "rendered-from-hook";

    /** The rendered documents keyed by their source template (e.g. {@code supermarket/templates/x.yaml}). */
    static Map<String, String> documentsBySource(String rendered) {
        Map<String, String> documents = new LinkedHashMap<>();
        for (String document : rendered.split("(?m)^---\\s*$")) {
            Matcher source = SOURCE.matcher(document);
            if (!source.find()) {
                continue;
            }
            String body = document.substring(source.end()).strip();
            if (!body.isEmpty()) {
                documents.merge(source.group(1), body + "\n", (a, b) -> a + "---\n" + b);
            }
        }
        return documents;
    }

    /** Every rendered document as a typed object (unknown kinds as GenericKubernetesResource). */
    static List<HasMetadata> objects(String rendered) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : documentsBySource(rendered).values()) {
            for (String single : document.split("(?m)^---\\s*$")) {
                objects.add(SERIALIZATION.unmarshal(single, HasMetadata.class));
            }
        }
        return objects;
    }

    /** A copy of the chart whose values.yaml is the defaults with {@code valuesFile} (if any) over them. */
    private static Path copyChart(Path valuesFile) {
        try {
            Path copy = Files.createTempDirectory("chart-").resolve("supermarket");
            try (Stream<Path> files = Files.walk(CHART)) {
                for (Path source : files.toList()) {
                    Path target = copy.resolve(CHART.relativize(source).toString());
                    if (Files.isDirectory(source)) {
                        Files.createDirectories(target);
                    } else if (!source.getFileName().toString().startsWith("values")) {
                        Files.copy(source, target);
                    }
                }
            }
            Yaml yaml = new Yaml();
            Map<String, Object> merged = yaml.load(Files.readString(CHART.resolve("values.yaml")));
            if (valuesFile != null) {
                deepMerge(merged, yaml.load(Files.readString(valuesFile)));
            }
            DumperOptions options = new DumperOptions();
            options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
            Files.writeString(copy.resolve("values.yaml"), new Yaml(options).dump(merged));
            return copy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Helm's coalescing of values: maps merge key by key, anything else replaces. */
    private static void deepMerge(Map<String, Object> base, Map<String, Object> override) {
        for (var entry : override.entrySet()) {
            Object existing = base.get(entry.getKey());
            if (existing instanceof Map<?, ?> && entry.getValue() instanceof Map<?, ?>) {
                deepMerge(DeploymentFiles.map(existing), DeploymentFiles.map(entry.getValue()));
            } else {
                base.put(entry.getKey(), entry.getValue());
            }
        }
    }
}
