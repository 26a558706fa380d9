package com.supermarket.deployment;

import static com.supermarket.deployment.DeploymentFiles.map;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import com.supermarket.broker.BrokerUsers;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** docker-compose.yml, parsed and checked the way {@code docker compose up} would rely on it. */
@SuppressWarnings("unchecked")
class ComposeFileTest {

    private final Map<String, Object> compose = DeploymentFiles.yaml("docker-compose.yml");
    private final Map<String, Object> services = map(compose.get("services"));

    /** The services that run to completion: the load client and the schema migrations. */
    private static final List<String> ONE_OFFS = List.of("load-client", "purchases-migrations");

    @Test
    void everyServiceDeclaresAHealthCheckAndOnlyTheOneOffsDisableIt() {
        assertThat(services).isNotEmpty().allSatisfy((name, definition) -> {
            Map<String, Object> service = map(definition);
            Map<String, Object> healthcheck = map(service.get("healthcheck"));
            assertThat(healthcheck).as(name + " healthcheck").isNotNull();
            if (Boolean.TRUE.equals(healthcheck.get("disable"))) {
                assertThat(name).isIn(ONE_OFFS);
                assertThat(service.get("restart")).as("a one-off run").isEqualTo("no");
                assertThat((List<Object>) service.get("profiles")).as(name + " runs only when asked for").isNotEmpty();
            } else {
                assertThat((List<Object>) healthcheck.get("test")).as(name + " healthcheck test").isNotEmpty();
                assertThat(healthcheck).as(name).containsKeys("interval", "timeout", "retries");
            }
        });
    }

    @Test
    void everyDependencyWaitsUntilItsTargetIsHealthyOrAOneOffHasSucceeded() {
        services.forEach((name, definition) -> {
            Object dependsOn = map(definition).get("depends_on");
            if (dependsOn == null) {
                return;
            }
            assertThat(dependsOn).as(name + ": depends_on in the long form, with conditions").isInstanceOf(Map.class);
            map(dependsOn).forEach((target, condition) -> {
                assertThat(services).as(name + " depends on " + target).containsKey(target);
                if (ONE_OFFS.contains(target)) {
                    assertThat(map(condition)).as(name + " -> " + target)
                            .containsEntry("condition", "service_completed_successfully");
                    return;
                }
                assertThat(map(condition)).as(name + " -> " + target).containsEntry("condition", "service_healthy");
                assertThat(map(map(services.get(target)).get("healthcheck"))).as(target + " can become healthy")
                        .doesNotContainEntry("disable", true);
            });
        });
    }

    @Test
    void everyServiceHasAMemoryLimit() {
        assertThat(services).allSatisfy((name, definition) -> assertThat(
                map(map(map(map(definition).get("deploy")).get("resources")).get("limits")))
                .as(name).containsKey("memory"));
    }

    @Test
    void namesEveryThirdPartyImageThroughAVariableWhoseDefaultIsTheOfficialImagePinned() {
        services.forEach((name, definition) -> {
            String image = (String) map(definition).get("image");
            assertThat(image).as(name).isNotNull();
            if (!image.startsWith("${IMAGE_REGISTRY")) {
                ImageVariables.officialDefault(image);
            } else {
                assertThat(image).as(name + ": one of ours, built here").endsWith(":${IMAGE_TAG:-0.1.0}");
                assertThat(map(map(definition).get("build"))).containsEntry("context", ".");
            }
        });
    }

    @Test
    void buildsOurImagesOnTheBaseImagesTheDockerfilesDefaultTo() {
        services.forEach((name, definition) -> {
            Map<String, Object> build = map(map(definition).get("build"));
            if (build == null) {
                return;
            }
            assertThat(build.get("dockerfile")).as(name + ": the one Dockerfile").isEqualTo(DockerfileStages.FILE);
            Map<String, String> declared = DockerfilesTest.baseImageArguments(DeploymentFiles.read(DockerfileStages.FILE));
            Map<String, Object> args = map(build.get("args"));
            assertThat(args).as(name + " build args").isNotNull().containsKeys(declared.keySet().toArray(String[]::new));
            assertThat(DockerfileStages.named()).as(name + ": MODULE names a stage of the Dockerfile").containsKey((String) args.get("MODULE"));
            declared.forEach((arg, dockerfileDefault) -> assertThat(ImageVariables.officialDefault((String) args.get(arg)))
                    .as(name + " " + arg + ": the Dockerfile's default").isEqualTo(dockerfileDefault));
        });
    }

    @Test
    void runsOurImagesWithAReadOnlyRootAndAWritableTmpAsTheChartDoes() {
        Map<String, Object> containerSecurity = map(DeploymentFiles.yaml("helm/supermarket/values.yaml").get("securityContext"));
        assertThat(containerSecurity).containsEntry("readOnlyRootFilesystem", true);
        services.forEach((name, definition) -> {
            Map<String, Object> service = map(definition);
            if (!service.containsKey("build")) {
                return;
            }
            assertThat(service).as(name).containsEntry("read_only", true);
            assertThat((List<String>) service.get("tmpfs")).as(name + ": /tmp, writable, of the chart's emptyDir size")
                    .singleElement().asString().startsWith("/tmp:").contains("rw", "exec", "size=256m");
        });
    }

    @Test
    void usesOnlyWhatComposeV1AndV2BothRead() {
        // Compose v2 reads a top-level "name"; docker-compose 1.29 rejects the whole file for it.
        assertThat(compose.keySet()).allSatisfy(key -> assertThat(key).matches("services|volumes|x-[a-z-]+"));
    }

    @Test
    void runsAtLeastTwoPurchaseApiReplicasBehindTheLoadBalancer() {
        Map<String, Object> api = map(services.get("purchase-api"));
        assertThat((Integer) map(api.get("deploy")).get("replicas")).isGreaterThanOrEqualTo(2);
        assertThat(api).as("replicas cannot share a host port").doesNotContainKey("ports");

        Map<String, Object> lb = map(services.get("lb"));
        assertThat(map(lb.get("depends_on"))).containsKey("purchase-api");
        assertThat(DeploymentFiles.read("deploy/nginx/nginx.conf")).contains("server purchase-api:8080");
    }

    @Test
    void publishesOnlyTheLoadBalancerAndTheManagementUiOnHostPortsThatCanBeMoved() {
        Map<String, Object> published = new TreeMap<>();
        services.forEach((name, definition) -> {
            Object ports = map(definition).get("ports");
            if (ports != null) {
                published.put(name, ports);
            }
        });

        // Variables, so that a test can run the file beside a machine's own 8080 and 15672.
        assertThat(published).containsOnly(
                entry("lb", List.of("${LB_PORT:-8080}:8080")),
                entry("rabbitmq", List.of("127.0.0.1:${RABBITMQ_MANAGEMENT_PORT:-15672}:15672")));
    }

    @Test
    void switchesPurchasesServiceToDynamodbUnderTheDynamodbProfile() {
        Map<String, Object> mysqlFlavour = map(services.get("purchases-service"));
        Map<String, Object> dynamoFlavour = map(services.get("purchases-service-dynamodb"));

        assertThat((List<Object>) mysqlFlavour.get("profiles")).containsExactly("mysql");
        assertThat(map(mysqlFlavour.get("environment"))).containsEntry("SPRING_PROFILES_ACTIVE", "mysql");
        assertThat(map(mysqlFlavour.get("depends_on"))).containsKey("mysql");
        // Run time: its own user with SELECT and INSERT; the schema owner only in the one-off migrations.
        assertThat(map(mysqlFlavour.get("environment"))).containsEntry("MYSQL_USERNAME", "purchases")
                .containsEntry("MYSQL_MIGRATE", "false").doesNotContainKey("MYSQL_MIGRATION_PASSWORD");
        assertThat(map(map(mysqlFlavour.get("depends_on")).get("purchases-migrations")))
                .containsEntry("condition", "service_completed_successfully");
        Map<String, Object> migrations = map(services.get("purchases-migrations"));
        assertThat(migrations.get("image")).isEqualTo(mysqlFlavour.get("image"));
        assertThat(migrations.get("entrypoint").toString()).contains("-Dloader.main=com.supermarket.purchases.storage.mysql.Migrations");
        assertThat(map(migrations.get("environment"))).containsEntry("MYSQL_MIGRATION_USERNAME", "supermarket");
        assertThat((List<Object>) map(services.get("mysql")).get("volumes"))
                .contains("./deploy/mysql/runtime-user.sh:/docker-entrypoint-initdb.d/runtime-user.sh:ro");
        assertThat(DeploymentFiles.read("deploy/mysql/runtime-user.sh"))
                .contains("GRANT SELECT, INSERT ON");
        assertThat((List<Object>) map(services.get("mysql")).get("profiles")).containsExactly("mysql");

        assertThat((List<Object>) dynamoFlavour.get("profiles")).containsExactly("dynamodb");
        assertThat(map(dynamoFlavour.get("environment"))).containsEntry("SPRING_PROFILES_ACTIVE", "dynamodb")
                .containsEntry("PURCHASES_DYNAMODB_ENDPOINT", "http://dynamodb-local:8000");
        assertThat(map(dynamoFlavour.get("depends_on"))).containsKey("dynamodb-local");
        // DynamoDB Local 2.x refuses a key id with anything but letters and digits.
        assertThat(map(dynamoFlavour.get("environment"))).hasEntrySatisfying("AWS_ACCESS_KEY_ID",
                key -> assertThat((String) key).matches("[A-Za-z0-9]+"));
        assertThat((List<Object>) map(services.get("dynamodb-local")).get("profiles")).containsExactly("dynamodb");
        assertThat(ImageVariables.officialDefault((String) map(services.get("mysql")).get("image"))).startsWith("mysql:8.");
    }

    @Test
    void pointsEveryServiceAtItsOwnBrokerUserAndTheVhostOfTheDefinitions() {
        var definitions = new RabbitDefinitions();
        Map<String, BrokerUsers> users = Map.of("purchase-api", BrokerUsers.PURCHASE_API, "store-service", BrokerUsers.STORE_SERVICE,
                "purchases-service", BrokerUsers.PURCHASES_SERVICE, "purchases-service-dynamodb", BrokerUsers.PURCHASES_SERVICE);
        for (String name : List.of("purchase-api", "store-service", "purchases-service", "purchases-service-dynamodb")) {
            Map<String, Object> env = map(map(services.get(name)).get("environment"));
            assertThat(env).as(name)
                    .containsEntry("RABBITMQ_HOST", "rabbitmq")
                    .containsEntry("RABBITMQ_VHOST", definitions.vhost())
                    .containsEntry("RABBITMQ_USERNAME", users.get(name).name())
                    .containsEntry("BROKER_DECLARE", "false")
                    .containsEntry("BROKER_MANAGE_POLICIES", "false")
                    .containsEntry("BROKER_SHARDS_PER_NODE", String.valueOf(definitions.shardsPerNode()));
        }
        assertThat(map(map(services.get("store-service")).get("environment"))).containsEntry("SERVER_PORT", "8081");
        assertThat(map(map(services.get("purchases-service")).get("environment"))).containsEntry("SERVER_PORT", "8082");
    }

    @Test
    void givesThePurchaseApiReplicasOneSharedRedisAsTheirIdempotencyStore() {
        Map<String, Object> api = map(services.get("purchase-api"));
        Map<String, Object> redis = map(services.get("redis"));

        assertThat(map(api.get("environment"))).containsEntry("API_IDEMPOTENCY_REDIS_URL", "redis://redis:6379/0");
        assertThat(map(map(api.get("depends_on")).get("redis"))).containsEntry("condition", "service_healthy");
        // SET ... NX GET, with which a batch's keys are claimed, needs Redis 7.0 or newer.
        assertThat(ImageVariables.officialDefault((String) redis.get("image"))).matches("redis:[7-9]\\.\\d+\\.\\d+-alpine");
        assertThat(String.join(" ", (List<String>) redis.get("command"))).contains("--maxmemory-policy volatile-ttl");
    }

    @Test
    void keepsPasswordsOutOfTheFile() {
        services.forEach((name, definition) -> {
            Object environment = map(definition).get("environment");
            if (environment == null) {
                return;
            }
            map(environment).forEach((key, value) -> {
                if (key.contains("PASSWORD")) {
                    assertThat(String.valueOf(value)).as(name + " " + key + " comes from .env").matches("\\$\\{\\w+:\\?.+}");
                }
            });
        });
        assertThat(DeploymentFiles.read(".gitignore").lines()).contains(".env");
        assertThat(Files.isRegularFile(DeploymentFiles.resolve("deploy/.env.example"))).isTrue();
    }

    @Test
    void mountsRabbitmqConfigurationThatExists() {
        Map<String, Object> rabbitmq = map(services.get("rabbitmq"));
        ImageVariables.officialDefault((String) rabbitmq.get("image"));
        for (Object volume : (List<Object>) rabbitmq.get("volumes")) {
            String mount = (String) volume;
            if (mount.startsWith("./")) {
                String hostPath = mount.substring(2, mount.indexOf(':'));
                assertThat(Files.isRegularFile(DeploymentFiles.resolve(hostPath))).as(hostPath).isTrue();
            }
        }
        assertThat((List<Object>) rabbitmq.get("volumes")).contains(
                "./deploy/rabbitmq/definitions.json:/etc/rabbitmq/definitions.json:ro",
                "./deploy/rabbitmq/enabled_plugins:/etc/rabbitmq/enabled_plugins:ro",
                "./deploy/rabbitmq/rabbitmq.conf:/etc/rabbitmq/rabbitmq.conf:ro");
        // Imported by start.sh once the node is up: at boot, RabbitMQ 4.3 leaves the sharded exchanges without shards.
        assertThat(DeploymentFiles.read("deploy/rabbitmq/rabbitmq.conf")).doesNotContainPattern("(?m)^load_definitions");
        assertThat(DeploymentFiles.read("deploy/rabbitmq/start.sh")).contains("import_definitions /etc/rabbitmq/definitions.json");
        for (String user : new RabbitDefinitions().users()) {
            assertThat(map(rabbitmq.get("healthcheck")).get("test").toString()).contains("authenticate_user " + user + " ");
        }
    }

    @Test
    void givesTheLoadClientAResultDirectoryItsUserCanWrite() {
        List<Object> volumes = (List<Object>) map(services.get("load-client")).get("volumes");
        String results = volumes.stream().map(String.class::cast).filter(v -> v.contains(":/results"))
                .findFirst().orElseThrow(() -> new AssertionError("load-client mounts nothing at /results"));
        String source = results.substring(0, results.indexOf(':'));

        // A bind mount (./runs) belongs to the host user; a new named volume is filled from the
        // image's /results, with its owner.
        assertThat(source).as("a named volume, not a host path").doesNotContain("/").doesNotStartWith(".");
        assertThat(map(compose.get("volumes"))).containsKey(source);
        String dockerfile = DockerfileStages.image("load-client");
        String user = dockerfile.replaceAll("(?s).*\nUSER (\\S+).*", "$1");
        assertThat(dockerfile).as("/results belongs to the image's user " + user)
                .contains("mkdir /results && chown " + user + " /results");
    }

    @Test
    void capsRabbitmqMemoryBelowItsContainerLimitAndLetsItShutDown() {
        Map<String, Object> rabbitmq = map(services.get("rabbitmq"));
        String limit = (String) map(map(map(rabbitmq.get("deploy")).get("resources")).get("limits")).get("memory");
        String conf = DeploymentFiles.read("deploy/rabbitmq/rabbitmq.conf");

        assertThat(conf).as("RabbitMQ does not reliably read the cgroup limit").doesNotContain("vm_memory_high_watermark.relative");
        String watermark = conf.replaceAll("(?s).*\nvm_memory_high_watermark\\.absolute = (\\d+)MB\n.*", "$1");
        assertThat(Long.parseLong(watermark) * 1_000_000).as("watermark vs. the %s limit", limit)
                .isLessThanOrEqualTo((long) (0.6 * Workloads.mebibytes(limit.replace("G", "Gi")) * 1024 * 1024));
        assertThat(rabbitmq.get("stop_grace_period")).as("time for a clean broker shutdown").isEqualTo("60s");
    }

    @Test
    void givesMysqlABufferPoolForThePurchaseIndexWithinItsContainerLimit() {
        Map<String, Object> mysql = map(services.get("mysql"));
        String limit = (String) map(map(map(mysql.get("deploy")).get("resources")).get("limits")).get("memory");
        String pool = ((List<String>) mysql.get("command")).stream()
                .filter(argument -> argument.startsWith("--innodb-buffer-pool-size="))
                .findFirst().orElseThrow().substring("--innodb-buffer-pool-size=".length());

        assertThat(Workloads.mebibytes(pool.replace("M", "Mi"))).as("above MySQL's 128 MB default")
                .isGreaterThan(128)
                .as("pool vs. the %s limit, room left for connections and the server", limit)
                .isLessThanOrEqualTo((int) (0.6 * Workloads.mebibytes(limit.replace("G", "Gi"))));
    }

    @Test
    void checksTheServicesWithTheImagesOwnHealthCheck() {
        List<Object> test = (List<Object>) map(compose.get("x-java-healthcheck")).get("test");

        assertThat(test.getFirst()).isEqualTo("CMD");
        for (String module : List.of("purchase-api", "store-service", "purchases-service")) {
            assertThat(test.subList(1, test.size())).as(module)
                    .isEqualTo(DockerfilesTest.healthCheckCommand(DockerfileStages.image(module)));
        }
    }

    @Test
    void offersTheLoadClientAsAOneOffServiceAgainstTheLoadBalancer() {
        Map<String, Object> loadClient = map(services.get("load-client"));

        assertThat((List<Object>) loadClient.get("profiles")).containsExactly("load");
        assertThat((List<Object>) loadClient.get("command")).contains("http://lb:8080");
        assertThat(map(loadClient.get("depends_on"))).containsKey("lb");
    }
}
