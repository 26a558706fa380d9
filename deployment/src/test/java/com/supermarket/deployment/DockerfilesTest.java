package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The images: one Dockerfile per module, pinned, non-root, layered, health-checked. */
class DockerfilesTest {

    private static final Pattern FROM = Pattern.compile("(?m)^FROM\\s+(\\S+)");

    @ParameterizedTest(name = "{0}")
    @CsvSource({"purchase-api, 8080", "store-service, 8081", "purchases-service, 8082"})
    void buildsAServiceImageFromTheLayeredJarAsANonRootUserWithAHealthCheck(String module, int port) {
        String dockerfile = DeploymentFiles.read(module + "/Dockerfile");

        assertPinnedBaseImages(dockerfile);
        assertThat(dockerfile).contains("COPY " + jar(module) + " app.jar")
                .contains("java -Djarmode=tools -jar app.jar extract --layers --launcher --destination extracted")
                .contains("COPY --from=build /build/extracted/dependencies/ ./",
                        "COPY --from=build /build/extracted/spring-boot-loader/ ./",
                        "COPY --from=build /build/extracted/snapshot-dependencies/ ./",
                        "COPY --from=build /build/extracted/application/ ./")
                .contains("ENTRYPOINT [\"java\", \"org.springframework.boot.loader.launch.JarLauncher\"]")
                .contains("SERVER_PORT=" + port).contains("EXPOSE " + port)
                .containsPattern("(?m)^HEALTHCHECK .*\\n\\s+CMD \\[.*\"HealthCheck\", \"/actuator/health/readiness\"\\]");
        assertRunsAsNonRootAfterLastFrom(dockerfile);
    }

    @Test
    void buildsTheLoadClientImageAsANonRootOneOffWithoutAHealthCheck() {
        String dockerfile = DeploymentFiles.read("load-client/Dockerfile");

        assertPinnedBaseImages(dockerfile);
        assertThat(dockerfile).contains("COPY " + jar("load-client") + " app.jar").contains("HEALTHCHECK NONE");
        assertRunsAsNonRootAfterLastFrom(dockerfile);
    }

    @Test
    void sendsTheDockerDaemonOnlyWhatTheDockerfilesCopy() {
        List<String> ignore = DeploymentFiles.read(".dockerignore").lines().toList();

        assertThat(ignore).contains("**", "!deploy/docker/HealthCheck.java");
        for (String module : List.of("purchase-api", "store-service", "purchases-service", "load-client")) {
            assertThat(ignore).contains("!" + jar(module));
        }
    }

    @Test
    void healthCheckPassesOnlyWhileTheEndpointAnswers200(@TempDir Path classes) throws Exception {
        var javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(null, null, null, "--release", "21", "-d", classes.toString(),
                DeploymentFiles.resolve("deploy/docker/HealthCheck.java").toString());
        assertThat(compiled).as("HealthCheck.java compiles").isZero();

        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/ready", exchange -> {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.createContext("/down", exchange -> {
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
        });
        server.start();
        try {
            int port = server.getAddress().getPort();
            assertThat(runHealthCheck(classes, port, "/ready")).isZero();
            assertThat(runHealthCheck(classes, port, "/down")).isEqualTo(1);
        } finally {
            server.stop(0);
        }
    }

    private static int runHealthCheck(Path classes, int port, String path) throws IOException, InterruptedException {
        String javaLauncher = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(javaLauncher, "-Xmx8m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", classes.toString(), "HealthCheck", path).redirectErrorStream(true);
        builder.environment().put("SERVER_PORT", String.valueOf(port));
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        Process process = builder.start();
        process.getInputStream().transferTo(OutputStream.nullOutputStream());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("HealthCheck exits").isTrue();
        return process.exitValue();
    }

    private static String jar(String module) {
        return module + "/target/" + module + "-0.1.0-SNAPSHOT.jar";
    }

    private static void assertPinnedBaseImages(String dockerfile) {
        Matcher from = FROM.matcher(dockerfile);
        int count = 0;
        while (from.find()) {
            HelmChartTest.assertPinned(from.group(1));
            assertThat(from.group(1)).startsWith("eclipse-temurin:21.");
            count++;
        }
        assertThat(count).isPositive();
    }

    private static void assertRunsAsNonRootAfterLastFrom(String dockerfile) {
        String finalStage = dockerfile.substring(dockerfile.lastIndexOf("\nFROM "));
        assertThat(finalStage).contains("USER 10001:10001").doesNotContainPattern("(?m)^USER (root|0)\\b");
        assertThat(finalStage.indexOf("USER 10001")).as("USER before the entrypoint")
                .isLessThan(finalStage.indexOf("ENTRYPOINT"));
    }
}
