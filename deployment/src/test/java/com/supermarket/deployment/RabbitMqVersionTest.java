package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.testing.RabbitMqVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One RabbitMQ version everywhere, the one production runs: the chart's broker image
 * ({@link RabbitMqVersion#VALUES_FILE}) is what the tests ({@link RabbitMqVersion}) and the
 * scripts ({@code scripts/lib/rabbitmq-version.sh}) read; docker-compose.yml, whose defaults can
 * come from no other file (compose interpolates only the environment and the operator's own
 * {@code .env}), names it too, and this test fails when it drifts.
 */
class RabbitMqVersionTest {

    @Test
    void theChartRunsTheImageOfItsValues() {
        assertThat((String) HelmChartTest.rabbitmqCluster(HelmChart.objects(HelmChart.template(null, Map.of()))).get("spec", "image"))
                .isEqualTo(RabbitMqVersion.officialImage());
    }

    @Test
    void dockerComposeRunsTheChartsImage() {
        Map<String, Object> rabbitmq = DeploymentFiles.map(DeploymentFiles.map(DeploymentFiles.yaml("docker-compose.yml")
                .get("services")).get("rabbitmq"));
        assertThat(ImageVariables.officialDefault((String) rabbitmq.get("image"))).isEqualTo(RabbitMqVersion.officialImage());
    }

    @Test
    void theScriptsReadTheChartsImage() throws IOException, InterruptedException {
        Process bash = new ProcessBuilder("bash", "-c",
                "source scripts/lib/rabbitmq-version.sh && echo \"$RABBITMQ_VERSION $RABBITMQ_OFFICIAL_IMAGE\"")
                .directory(DeploymentFiles.root().toFile()).redirectErrorStream(true).start();
        String printed = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(bash.waitFor(30, TimeUnit.SECONDS)).isTrue();

        assertThat(bash.exitValue()).as(printed).isZero();
        assertThat(printed).isEqualTo(RabbitMqVersion.version() + " " + RabbitMqVersion.officialImage());
    }

    @Test
    void noPresetRunsAnotherBroker() throws IOException {
        try (var presets = Files.list(DeploymentFiles.resolve("helm/supermarket"))) {
            for (Path preset : presets.filter(p -> p.getFileName().toString().matches("values-.+\\.yaml")).toList()) {
                Map<String, Object> rabbitmq = DeploymentFiles.map(DeploymentFiles.yaml("helm/supermarket/" + preset.getFileName())
                        .getOrDefault("rabbitmq", Map.of()));
                Map<String, Object> cluster = DeploymentFiles.map(rabbitmq.getOrDefault("cluster", Map.of()));
                assertThat(cluster).as(preset.toString()).doesNotContainKey("image");
            }
        }
    }
}
