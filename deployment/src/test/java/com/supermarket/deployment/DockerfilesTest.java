package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.yaml.snakeyaml.Yaml;

/** The images: one Dockerfile, a stage per module, pinned, non-root, layered, health-checked. */
class DockerfilesTest {

    private static final List<String> MODULES = List.of("purchase-api", "store-service", "purchases-service", "load-client");
    private static final Pattern BASE_IMAGE_ARG = Pattern.compile("(?m)^ARG (\\w+_IMAGE)=(\\S+)$");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{(\\w+)}");
    /** What the legacy builder (DOCKER_BUILDKIT=0) does not understand, or BuildKit would fetch. */
    private static final Pattern BUILDKIT_ONLY = Pattern.compile(
            "(?m)^# ?syntax=|^(RUN|COPY|ADD)(\\s+--[a-z]+=\\S+)*\\s+--(mount|link|chmod|parents|exclude|network|security)\\b"
            + "|<<-?[\"']?[A-Z]+");

    @ParameterizedTest(name = "{0}")
    @CsvSource({"purchase-api, 8080, 9080", "store-service, 8081, 9081", "purchases-service, 8082, 9082"})
    void buildsAServiceImageFromTheLayeredJarAsANonRootUserWithAHealthCheck(String module, int port, int managementPort) {
        String dockerfile = DeploymentFiles.read(DockerfileStages.FILE);
        String image = DockerfileStages.image(module);

        assertPinnedBaseImages(dockerfile);
        assertThat(DockerfileStages.baseImageArgument(module)).isEqualTo("JAVA_RUNTIME_IMAGE");
        assertThat(dockerfile).contains("COPY ${MODULE}/target/${MODULE}-0.1.0-SNAPSHOT.jar app.jar")
                .contains("java -Djarmode=tools -jar app.jar extract --layers --launcher --destination extracted");
        assertThat(image).contains("COPY --from=build /build/extracted/dependencies/ ./",
                        "COPY --from=build /build/extracted/spring-boot-loader/ ./",
                        "COPY --from=build /build/extracted/snapshot-dependencies/ ./",
                        "COPY --from=build /build/extracted/application/ ./")
                .contains("ENTRYPOINT [\"java\", \"org.springframework.boot.loader.launch.JarLauncher\"]")
                .contains("SERVER_PORT=" + port).contains("MANAGEMENT_PORT=" + managementPort)
                .contains("EXPOSE " + port + " " + managementPort)
                .containsPattern("(?m)^HEALTHCHECK .*\\n\\s+CMD \\[.*\"HealthCheck\", \"/actuator/health/readiness\"\\]");
        assertThat(healthCheckCommand(image)).as("the service's JAVA_TOOL_OPTIONS stay out of the checking JVM")
                .startsWith("env", "-u", "JAVA_TOOL_OPTIONS", "java");
        assertThat(DeploymentFiles.read(module + "/src/main/resources/application.yml"))
                .as("the image's MANAGEMENT_PORT is the service's own default")
                .contains("port: ${MANAGEMENT_PORT:" + managementPort + "}");
        assertRunsAsNonRoot(image);
    }

    @Test
    void buildsTheLoadClientImageAsANonRootOneOffWithoutAHealthCheck() {
        String image = DockerfileStages.image("load-client");

        assertThat(DockerfileStages.baseImageArgument("load-client")).isEqualTo("JAVA_RUNTIME_IMAGE");
        assertThat(image).contains("COPY --from=build /build/app.jar app.jar").contains("HEALTHCHECK NONE")
                .contains("ENTRYPOINT [\"java\", \"-jar\", \"/app/app.jar\"]");
        assertRunsAsNonRoot(image);
    }

    @Test
    void theImageIsTheStageOfTheModuleGiven() {
        String dockerfile = DeploymentFiles.read(DockerfileStages.FILE);
        List<DockerfileStages.Stage> stages = DockerfileStages.stages(dockerfile);

        assertThat(dockerfile.substring(0, dockerfile.indexOf("\nFROM "))).as("MODULE has no default: it must be given")
                .containsPattern("(?m)^ARG MODULE$");
        assertThat(stages.getLast().from()).isEqualTo("${MODULE}");
        assertThat(DockerfileStages.named()).containsKeys(MODULES.toArray(String[]::new));
        assertThat(stages.getFirst().text()).as("the build stage reads MODULE").containsPattern("(?m)^ARG MODULE$");
    }

    @Test
    void buildsWithTheLegacyBuilderAndAnOfflineBuildKit() throws IOException {
        List<Path> dockerfiles = new ArrayList<>();
        dockerfiles.add(DeploymentFiles.resolve(DockerfileStages.FILE));
        try (Stream<Path> standIns = Files.list(DeploymentFiles.resolve("deploy/images"))) {
            standIns.map(dir -> dir.resolve("Dockerfile")).filter(Files::isRegularFile).forEach(dockerfiles::add);
        }

        // No "# syntax=" line either: BuildKit would fetch that frontend from a registry, while its
        // built-in one reads everything these files use.
        assertThat(dockerfiles).hasSizeGreaterThan(1).allSatisfy(file ->
                assertThat(DeploymentFiles.read(file)).as(file.toString()).doesNotContainPattern(BUILDKIT_ONLY));
    }

    @Test
    void sendsTheDockerDaemonOnlyWhatTheDockerfilesCopy() {
        List<String> ignore = DeploymentFiles.read(".dockerignore").lines().toList();

        assertThat(ignore).contains("**", "!deploy/docker/HealthCheck.java");
        for (String module : MODULES) {
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
        // The image's command as written, under a JAVA_TOOL_OPTIONS whose collector would clash
        // with the command's own -XX:+UseSerialGC (values-xlarge.yaml sets -XX:+UseParallelGC).
        List<String> command = healthCheckCommand(DockerfileStages.image("purchase-api"));
        try {
            int port = server.getAddress().getPort();
            assertThat(runHealthCheck(command, classes, port, "/ready")).isZero();
            assertThat(runHealthCheck(command, classes, port, "/down")).isEqualTo(1);
            assertThat(runHealthCheck(command, classes, null, "/ready")).as("no MANAGEMENT_PORT").isEqualTo(1);
        } finally {
            server.stop(0);
        }
    }

    /** The HEALTHCHECK's CMD array of a Dockerfile. */
    static List<String> healthCheckCommand(String dockerfile) {
        Matcher cmd = Pattern.compile("(?m)^\\s+CMD (\\[.*\\])$").matcher(dockerfile.substring(dockerfile.indexOf("HEALTHCHECK ")));
        assertThat(cmd.find()).as("HEALTHCHECK CMD").isTrue();
        return new Yaml().load(cmd.group(1));
    }

    private static int runHealthCheck(List<String> command, Path classes, Integer port, String path)
            throws IOException, InterruptedException {
        String javaLauncher = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> local = command.stream()
                .map(a -> a.equals("java") ? javaLauncher : a.equals("/opt/healthcheck") ? classes.toString() : a)
                .map(a -> a.equals("/actuator/health/readiness") ? path : a)
                .toList();
        ProcessBuilder builder = new ProcessBuilder(local).redirectErrorStream(true);
        builder.environment().remove("MANAGEMENT_PORT");
        if (port != null) {
            builder.environment().put("MANAGEMENT_PORT", String.valueOf(port));
        }
        builder.environment().put("JAVA_TOOL_OPTIONS", "-XX:+UseParallelGC -XX:MaxRAMPercentage=70");
        Process process = builder.start();
        process.getInputStream().transferTo(OutputStream.nullOutputStream());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("HealthCheck exits").isTrue();
        return process.exitValue();
    }

    private static String jar(String module) {
        return module + "/target/" + module + "-0.1.0-SNAPSHOT.jar";
    }

    /**
     * The {@code ARG NAME_IMAGE=default} lines before the first FROM: the base images, which
     * {@code --build-arg} (docker-compose.yml, scripts/images.sh's stand-ins) can replace.
     */
    static Map<String, String> baseImageArguments(String dockerfile) {
        Map<String, String> arguments = new LinkedHashMap<>();
        Matcher arg = BASE_IMAGE_ARG.matcher(dockerfile.substring(0, dockerfile.indexOf("\nFROM ")));
        while (arg.find()) {
            arguments.put(arg.group(1), arg.group(2));
        }
        return arguments;
    }

    /**
     * Every stage starts from a base image variable whose default is the official Temurin 21
     * image, pinned (the JDK for the build stage, the JRE for the images that run), or from an
     * earlier stage; the last one from the stage MODULE names.
     */
    private static void assertPinnedBaseImages(String dockerfile) {
        Map<String, String> arguments = baseImageArguments(dockerfile);
        assertThat(ImageVariables.printedByImagesScript()).as("scripts/images.sh sets every base image argument")
                .containsAll(arguments.keySet());
        List<String> earlier = new ArrayList<>();
        List<DockerfileStages.Stage> stages = DockerfileStages.stages(dockerfile);
        for (DockerfileStages.Stage stage : stages.subList(0, stages.size() - 1)) {
            if (!earlier.contains(stage.from())) {
                Matcher variable = VARIABLE.matcher(stage.from());
                assertThat(variable.matches()).as("FROM %s: a base image argument or an earlier stage", stage.from()).isTrue();
                String image = arguments.get(variable.group(1));
                assertThat(image).as("ARG %s=<default> before the first FROM", variable.group(1)).isNotNull();
                ImageVariables.assertOfficialAndPinned(image);
                assertThat(image).startsWith("eclipse-temurin:21.")
                        .contains(stage.name().equals("build") ? "-jdk-" : "-jre-");
            }
            earlier.add(stage.name());
        }
        assertThat(stages.getLast().from()).isEqualTo("${MODULE}");
    }

    /** The image's last USER is the app's uid, and root is never taken back. */
    private static void assertRunsAsNonRoot(String image) {
        assertThat(image).contains("USER 10001:10001").doesNotContainPattern("(?m)^USER (root|0)\\b");
        assertThat(image.lastIndexOf("USER 10001:10001")).as("no USER after the app's")
                .isEqualTo(image.lastIndexOf("\nUSER ") + 1);
    }
}
