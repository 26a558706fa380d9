package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Messaging Topology Operator reconciles each topology object alone and backs off
 * exponentially on every failure: on a fresh install the objects fail until the broker is up, and
 * a Permission tried before its User is in the broker, or a Binding before its Queue, fails again,
 * so without help the install waits minutes for retries (docs/kubernetes-install.md, run 4). The
 * chart's topology-sync Job re-triggers them in dependency order once the broker is up; these
 * tests pin that order against the objects the chart renders, and the Job's bounds and rights.
 */
class TopologySyncChartTest {

    /** The operator's resources (plural, group rabbitmq.com) by kind. */
    private static final Map<String, String> RESOURCES = Map.of("User", "users", "Permission", "permissions",
            "Exchange", "exchanges", "Queue", "queues", "Binding", "bindings", "Policy", "policies");
    private static final String GROUP = ".rabbitmq.com";
    private static final String ANNOTATION = "supermarket/reconcile-requested-by=$(POD_NAME)";

    /** One container of the Job, in the order the pod runs them: kubectl's verb, what, options. */
    private record Step(String verb, List<String> targets, String selector, String condition, int timeoutSeconds,
            List<String> args) {

        static Step of(Container container) {
            List<String> args = container.getArgs();
            String selector = option(args, "--selector");
            String condition = option(args, "--for");
            String timeout = option(args, "--timeout");
            return new Step(args.get(0), Arrays.asList(args.get(1).split(",")), selector,
                    condition == null ? null : condition.replace("condition=", ""),
                    timeout == null ? -1 : Integer.parseInt(timeout.replace("s", "")), args);
        }

        private static String option(List<String> args, String name) {
            return args.stream().filter(a -> a.startsWith(name + "=")).map(a -> a.substring(name.length() + 1))
                    .findFirst().orElse(null);
        }

        boolean covers(GenericKubernetesResource object) {
            return targets.contains(RESOURCES.get(object.getKind()) + GROUP) && selector != null
                    && Arrays.stream(selector.split(",")).map(l -> l.split("=", 2))
                            .allMatch(l -> l[1].equals(object.getMetadata().getLabels().get(l[0])));
        }
    }

    static Stream<Arguments> renders() {
        return Stream.concat(HelmChartTest.valuesFiles().map(a -> Arguments.of(a.get()[0], a.get()[1], Map.of())),
                Stream.of(Arguments.of("sharded (Policies)", null, Map.of("rabbitmq.topologyMode", "sharded"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("renders")
    void retriggersEveryTopologyObjectOnceTheBrokerIsUpAndOnlyAfterWhatItNeedsIsReady(String name, Path values,
            Map<String, Object> sets) {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(values, sets));
        List<GenericKubernetesResource> topology = HelmChartTest.ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> RESOURCES.containsKey(o.getKind()) && o.getApiVersion().equals("rabbitmq.com/v1beta1")).toList();
        Job job = job(objects);
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        List<Step> steps = Stream.concat(pod.getInitContainers().stream(), pod.getContainers().stream()).map(Step::of).toList();

        assertThat(job.getMetadata().getAnnotations()).as("not a hook: helm install --wait runs those after the pods are Ready")
                .doesNotContainKey("helm.sh/hook");
        assertThat(steps.getFirst()).as("the broker first").satisfies(s -> {
            assertThat(s.verb()).isEqualTo("wait");
            assertThat(s.targets()).containsExactly("rabbitmqclusters" + GROUP + "/" + HelmChart.RELEASE + "-rabbitmq");
            assertThat(s.condition()).isEqualTo("AllReplicasReady");
        });
        assertThat(topology).extracting(HasMetadata::getKind).contains("User", "Permission", "Exchange", "Queue", "Binding");
        // Where each object is re-triggered, and where the Job has seen it Ready.
        Map<String, Integer> retried = new HashMap<>();
        Map<String, Integer> ready = new HashMap<>();
        for (GenericKubernetesResource object : topology) {
            String key = object.getKind() + " " + object.getMetadata().getName();
            int retry = index(steps, s -> s.verb().equals("annotate") && s.covers(object));
            int wait = index(steps, s -> s.verb().equals("wait") && "Ready".equals(s.condition()) && s.covers(object));
            assertThat(retry).as(key + " re-triggered by the Job").isPositive();
            assertThat(steps.get(retry).args()).as(key).contains("--overwrite", ANNOTATION);
            assertThat(wait).as(key + " waited for after it is re-triggered").isGreaterThan(retry);
            retried.put(key, retry);
            ready.put(key, wait);
        }
        // What each object needs in the broker before the operator can declare it.
        Map<String, String> declared = new HashMap<>();
        topology.stream().filter(o -> o.getKind().equals("Exchange") || o.getKind().equals("Queue")).forEach(o -> declared.put(
                o.getKind().toLowerCase() + " " + BrokerUsersChartTest.spec(o).get("name"), o.getKind() + " " + o.getMetadata().getName()));
        for (GenericKubernetesResource object : topology) {
            Map<String, Object> spec = BrokerUsersChartTest.spec(object);
            List<String> needs = switch (object.getKind()) {
                case "Permission" -> List.of("User " + BrokerUsersChartTest.map(spec.get("userReference")).get("name"));
                case "Binding" -> List.of(declared.get("exchange " + spec.get("source")),
                        declared.get(spec.get("destinationType") + " " + spec.get("destination")));
                default -> List.of();
            };
            String key = object.getKind() + " " + object.getMetadata().getName();
            for (String need : needs) {
                assertThat(need).as(key + " needs a rendered object").isNotNull();
                assertThat(ready).containsKey(need);
                assertThat(retried.get(key)).as(key + " re-triggered only once " + need + " is Ready").isGreaterThan(ready.get(need));
            }
        }
    }

    @Test
    void isBoundedInTimeAndEveryPodReTriggersAnew() {
        Job job = job(HelmChart.objects(HelmChart.template(null, Map.of())));
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        List<Step> steps = Stream.concat(pod.getInitContainers().stream(), pod.getContainers().stream()).map(Step::of).toList();
        long deadline = job.getSpec().getActiveDeadlineSeconds();

        assertThat(deadline).as("activeDeadlineSeconds").isPositive();
        assertThat(job.getSpec().getBackoffLimit()).as("retries, each a new pod").isPositive();
        assertThat(pod.getRestartPolicy()).as("a new pod (name) per try, so the annotation changes").isEqualTo("Never");
        assertThat(steps).filteredOn(s -> s.verb().equals("wait"))
                .allSatisfy(s -> assertThat(s.timeoutSeconds()).isPositive().isLessThanOrEqualTo((int) deadline));
        assertThat(steps).extracting(Step::verb).containsOnly("wait", "annotate");
        Stream.concat(pod.getInitContainers().stream(), pod.getContainers().stream()).forEach(c -> {
            assertThat(c.getEnv()).filteredOn(e -> e.getName().equals("POD_NAME")).singleElement()
                    .satisfies(e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name"));
            assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
            assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
            assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
            assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
            HelmChartTest.assertPinned(c.getImage());
        });
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    }

    @Test
    void mayOnlyReadTheBrokerAndAnnotateTheTopologyOfItsNamespace() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of()));
        Job job = job(objects);
        String account = job.getSpec().getTemplate().getSpec().getServiceAccountName();
        Role role = HelmChartTest.ofKind(objects, Role.class).stream().filter(r -> r.getMetadata().getName().equals(account))
                .findFirst().orElseThrow();
        RoleBinding binding = HelmChartTest.ofKind(objects, RoleBinding.class).stream()
                .filter(b -> b.getRoleRef().getName().equals(role.getMetadata().getName())).findFirst().orElseThrow();

        assertThat(role.getRules()).extracting(PolicyRule::getApiGroups, r -> Set.copyOf(r.getResources()), r -> Set.copyOf(r.getVerbs()))
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(List.of("rabbitmq.com"), Set.of("rabbitmqclusters"), Set.of("get", "list", "watch")),
                        org.assertj.core.groups.Tuple.tuple(List.of("rabbitmq.com"), Set.copyOf(RESOURCES.values()),
                                Set.of("get", "list", "watch", "patch")));
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> assertThat(s.getName()).isEqualTo(account));
        assertThat(HelmChartTest.ofKind(objects, ServiceAccount.class)).filteredOn(a -> a.getMetadata().getName().equals(account))
                .singleElement().satisfies(a -> assertThat(a.getAutomountServiceAccountToken()).isFalse());
        assertThat(job.getSpec().getTemplate().getSpec().getAutomountServiceAccountToken()).as("its pod alone has the token").isTrue();
        assertThat(HelmChartTest.workloads(objects)).allSatisfy(w -> assertThat(w.template().getSpec().getServiceAccountName())
                .as(w.name()).isNotEqualTo(account));
    }

    @Test
    void isNotRenderedWithoutTheOperatorsTopology() {
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("rabbitmq.serviceUsers.enabled", "false")));

        assertThat(HelmChartTest.ofKind(objects, Job.class)).isEmpty();
        assertThat(HelmChartTest.ofKind(objects, Role.class)).isEmpty();
    }

    private static Job job(List<HasMetadata> objects) {
        return HelmChartTest.ofKind(objects, Job.class).stream()
                .filter(j -> "topology-sync".equals(j.getMetadata().getLabels().get("app.kubernetes.io/component")))
                .findFirst().orElseThrow(() -> new AssertionError("no topology-sync Job rendered"));
    }

    private static int index(List<Step> steps, java.util.function.Predicate<Step> what) {
        for (int i = 0; i < steps.size(); i++) {
            if (what.test(steps.get(i))) {
                return i;
            }
        }
        return -1;
    }
}
