package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/rabbitmq/start.sh, the broker container's PID 1, run for real with stand-ins for the
 * image's docker-entrypoint.sh (a "broker" that takes two seconds to shut down) and rabbitmqctl:
 * it imports the definitions, deletes the first boot's guest, sets the passwords, and on stop
 * waits for the broker.
 */
class RabbitStartScriptTest {

    @Test
    void setsThePasswordAndOnStopWaitsUntilTheBrokerHasShutDown(@TempDir Path dir) throws Exception {
        Path stopped = dir.resolve("stopped");
        Path calls = dir.resolve("rabbitmqctl.calls");
        executable(dir.resolve("docker-entrypoint.sh"), """
                #!/bin/bash
                trap 'sleep 2; echo done > "$STOPPED"; exit 0' TERM
                while true; do sleep 0.1; done
                """);
        executable(dir.resolve("rabbitmqctl"), """
                #!/bin/bash
                echo "$@" >> "$CALLS"
                """);
        ProcessBuilder builder = new ProcessBuilder("bash", DeploymentFiles.resolve("deploy/rabbitmq/start.sh").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("out").toFile());
        builder.environment().put("PATH", dir + ":" + System.getenv("PATH"));
        builder.environment().put("RABBITMQ_PURCHASE_API_PASSWORD", "s3cret-api");
        builder.environment().put("RABBITMQ_STORE_SERVICE_PASSWORD", "s3cret-store");
        builder.environment().put("RABBITMQ_PURCHASES_SERVICE_PASSWORD", "s3cret-purchases");
        builder.environment().put("STOPPED", stopped.toString());
        builder.environment().put("CALLS", calls.toString());
        Process script = builder.start();
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Files.exists(calls) && Files.readString(calls).contains("change_password purchases-service"));
            assertThat(Files.readString(calls)).contains("change_password purchase-api s3cret-api",
                    "change_password store-service s3cret-store", "change_password purchases-service s3cret-purchases");
            String order = Files.readString(calls);
            assertThat(order.indexOf("import_definitions /etc/rabbitmq/definitions.json")).as("definitions imported first")
                    .isNotNegative().isLessThan(order.indexOf("delete_user guest"))
                    .isLessThan(order.indexOf("change_password purchase-api"));

            script.destroy(); // SIGTERM, as docker stop sends it

            assertThat(script.waitFor(30, TimeUnit.SECONDS)).as("start.sh exits after the broker").isTrue();
            assertThat(stopped).as("the broker finished its shutdown before PID 1 exited").exists();
            assertThat(script.exitValue()).isZero();
        } finally {
            script.destroyForcibly();
        }
    }

    private static void executable(Path file, String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
    }
}
