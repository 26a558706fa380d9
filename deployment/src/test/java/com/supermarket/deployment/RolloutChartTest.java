package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A rolling update or a scale-in drops no request (helm/README.md, "Rollouts"): purchase-api
 * keeps serving through its preStop call while the ALB deregisters it, closing kept-alive connections, drains within its shutdown
 * phase, and is killed only after both; the ALB waits for exactly that and counts a new pod ready
 * only once its health check passes; the consumers get the time their stop takes.
 */
class RolloutChartTest {

    private static List<HasMetadata> render(Path valuesFile, Map<String, Object> sets) {
        return HelmChart.objects(HelmChart.template(valuesFile, sets));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("com.supermarket.deployment.HelmChartTest#eksValuesFiles")
    void purchaseApiServesThroughItsPreStopSleepThenDrainsBeforeItsGraceRunsOut(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile, Map.of());
        Container api = HelmChartTest.container(objects, "purchase-api");

        int preStop = preStopSleepSeconds(api);
        int drain = drainSeconds(api);
        assertThat(preStop).as("preStop sleep: the ALB deregistration takes seconds").isGreaterThanOrEqualTo(10);
        assertThat(drain).as("the drain outlasts a purchase's longest wait (key check, admission, confirm: 7 s)")
                .isGreaterThanOrEqualTo(10);
        assertThat(graceSeconds(objects, "purchase-api")).isGreaterThan(preStop + drain);
        assertThat(HelmChartTest.ofKind(objects, Ingress.class).getFirst().getMetadata().getAnnotations())
                .as("the ALB holds a leaving pod's connections through its preStop sleep and drain")
                .containsEntry("alb.ingress.kubernetes.io/target-group-attributes",
                        "deregistration_delay.timeout_seconds=" + (preStop + drain));
    }

    @Test
    void theAlbDeregistrationDelayFollowsTheShutdownValues() {
        List<HasMetadata> objects = render(null, Map.of("purchaseApi.shutdown.preStopSleepSeconds", 30,
                "purchaseApi.shutdown.drainSeconds", 12, "purchaseApi.terminationGracePeriodSeconds", 60));
        Container api = HelmChartTest.container(objects, "purchase-api");

        assertThat(preStopSleepSeconds(api)).isEqualTo(30);
        assertThat(HelmChartTest.env(api, "SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE").getValue()).isEqualTo("12s");
        assertThat(graceSeconds(objects, "purchase-api")).isEqualTo(60);
        assertThat(HelmChartTest.ofKind(objects, Ingress.class).getFirst().getMetadata().getAnnotations())
                .containsEntry("alb.ingress.kubernetes.io/target-group-attributes", "deregistration_delay.timeout_seconds=42");
    }

    @Test
    void refusesAGraceThatEndsBeforeThePreStopSleepAndTheDrain() {
        assertThatThrownBy(() -> HelmChart.template(null, Map.of("purchaseApi.terminationGracePeriodSeconds", 30)))
                .hasMessageContaining("terminationGracePeriodSeconds (30) must exceed")
                .hasMessageContaining("(35)");
    }

    @Test
    void theAlbAdmitsANewPodOnlyOnceItsQuickHealthCheckPasses() {
        Map<String, String> annotations = HelmChartTest.ofKind(render(null, Map.of(
                        "purchaseApi.ingress.annotations.alb\\.ingress\\.kubernetes\\.io/healthcheck-interval-seconds", "\"30\"")),
                Ingress.class).getFirst().getMetadata().getAnnotations();

        // The pod readiness gate (injected by the controller in a labelled namespace) waits for
        // this check; a slow one would only make the rollout slow, so the chart's own wins.
        assertThat(annotations)
                .containsEntry("alb.ingress.kubernetes.io/healthcheck-path", "/actuator/health/readiness")
                .containsEntry("alb.ingress.kubernetes.io/healthcheck-interval-seconds", "5")
                .containsEntry("alb.ingress.kubernetes.io/healthcheck-timeout-seconds", "3")
                .containsEntry("alb.ingress.kubernetes.io/healthy-threshold-count", "2")
                .containsEntry("alb.ingress.kubernetes.io/unhealthy-threshold-count", "2");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("com.supermarket.deployment.HelmChartTest#valuesFiles")
    void theConsumersGetTheTimeTheirStopTakes(String name, Path valuesFile) {
        List<HasMetadata> objects = render(valuesFile, Map.of());

        // purchases-service: its 20 s shutdown phase (application.yml), in which the consumers
        // stop and the batches being written finish or go back to the broker.
        assertThat(graceSeconds(objects, "purchases-service")).isGreaterThan(20);
        // store-service: its consumers stop, then a snapshot being written may take up to a
        // minute before what was counted is fsynced and acknowledged.
        assertThat(graceSeconds(objects, "store-service")).isGreaterThan(60);
        for (String consumer : List.of("purchases-service", "store-service")) {
            assertThat(HelmChartTest.container(objects, consumer).getLifecycle())
                    .as("%s takes no traffic from a load balancer: no preStop sleep", consumer).isNull();
        }
    }

    private static int preStopSleepSeconds(Container container) {
        assertThat(container.getLifecycle()).as("%s has a preStop hook", container.getName()).isNotNull();
        HTTPGetAction call = container.getLifecycle().getPreStop().getHttpGet();
        assertThat(call).as("%s's preStop calls its drain endpoint, which closes kept-alive connections", container.getName())
                .isNotNull();
        assertThat(call.getPort().getStrVal()).as("on the management port, never behind the Ingress").isEqualTo("management");
        assertThat(call.getPath()).startsWith("/actuator/drain/");
        return Integer.parseInt(call.getPath().substring("/actuator/drain/".length()));
    }

    private static int drainSeconds(Container container) {
        String timeout = HelmChartTest.env(container, "SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE").getValue();
        assertThat(timeout).matches("\\d+s");
        return Integer.parseInt(timeout.substring(0, timeout.length() - 1));
    }

    private static int graceSeconds(List<HasMetadata> objects, String component) {
        Long grace = HelmChartTest.workload(objects, component).template().getSpec().getTerminationGracePeriodSeconds();
        assertThat(grace).as("%s sets terminationGracePeriodSeconds", component).isNotNull();
        return grace.intValue();
    }
}
