package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.BrokerSettings.TopologyMode;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestNode;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Topology;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.yaml.snakeyaml.Yaml;

/**
 * The chart's dashboard and alerts against live metrics: a RabbitMQ node of this test's own
 * ({@link TestNode}, with rabbitmq_prometheus and the sharding plugin, so that its memory alarm
 * leaves the shared broker alone), the three services started from their jars against it and the
 * test MariaDB ({@link TestServices}), and a real Prometheus scraping them the way the chart's ServiceMonitors do
 * (same paths, the broker's per-queue endpoint, job = Service name) with the chart's rules file
 * loaded. After some purchases (accepted, rejected, and refused under a memory alarm), every
 * dashboard query and every metric an alert reads must return series, and Prometheus must
 * evaluate every rule without error. All of it once per topology mode ({@code sharded}: the
 * sharding plugin's queues; {@code replicated}: the quorum queues {@code <exchange>.shard.<i>}),
 * each with a node and services of its own, so that the alerts and panels meet each mode's real
 * queue names.
 *
 * <p>Needs the service jars (build the reactor, or
 * {@code -pl purchase-api,store-service,purchases-service,deployment -am verify}) and Debian's
 * {@code prometheus} (no image of it is built here). Ports of the services and Prometheus: 100 from
 * {@code -Dobservability.portBase} (18100). Logs: {@code deployment/target/observability-it/<mode>}.
 */
@ParameterizedClass(name = "{0} topology")
@EnumSource(TopologyMode.class)
class PrometheusQueriesIT {

    private static final int BASE = Integer.getInteger("observability.portBase", 18100);
    private static final int API = BASE;
    private static final int STORE = BASE + 1;
    private static final int PURCHASES = BASE + 2;
    private static final int MANAGEMENT = BASE + 10;
    private static final int PROMETHEUS = BASE + 90;
    private static final String DATABASE = System.getProperty("observability.database", "purchases_observability_it");
    private static final Pattern SELECTOR = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[^}]*\\}|(?=\\[))");

    private static final int ACCEPTED = 40;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static ServiceProcesses processes;
    private static Path dir;
    private static TestNode node;
    private static TestBroker broker;
    /** The mode of the running invocation, for the static set-up; the tests read {@link #mode}. */
    private static TopologyMode topology;

    @Parameter
    TopologyMode mode;

    @BeforeParameterizedClassInvocation
    static void startBrokerServicesAndPrometheus(TopologyMode mode) throws Exception {
        topology = mode;
        String name = mode.name().toLowerCase(Locale.ROOT);
        // Logs and data under target/, kept after the run for a look at what failed.
        dir = DeploymentFiles.resolve("deployment/target/observability-it/" + name);
        deleteRecursively(dir);
        Files.createDirectories(dir);
        node = TestNode.start("observability-" + name);
        broker = node.broker("observability");
        processes = new ServiceProcesses(dir, broker);
        // Its counts' state in the run's folder, so each run starts empty.
        processes.startService("store-service", STORE, MANAGEMENT + 1, inMode(Map.of("STORE_DURABILITY_STATE_DIR", dir.resolve("store-state").toString())));
        TestServices.Database mariaDb = TestServices.mariaDb();
        processes.startService("purchases-service", PURCHASES, MANAGEMENT + 2, inMode(Map.of("SPRING_PROFILES_ACTIVE", "mysql",
                "MYSQL_URL", mariaDb.jdbcUrl(DATABASE + "_" + name + "?createDatabaseIfNotExist=true"),
                "MYSQL_USERNAME", mariaDb.username(), "MYSQL_PASSWORD", mariaDb.password())));
        processes.startService("purchase-api", API, MANAGEMENT, inMode(Map.of()));
        ServiceProcesses.awaitReady(MANAGEMENT, MANAGEMENT + 1, MANAGEMENT + 2);
        startPrometheus();
    }

    @AfterParameterizedClassInvocation
    static void stopEverything() throws Exception {
        try {
            if (processes != null) {
                processes.close();
            }
            deleteRecursively(dir.resolve("tsdb"));
        } finally {
            if (node != null) {
                node.close();
                node = null;
            }
        }
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (Files.exists(path)) {
            try (Stream<Path> files = Files.walk(path)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(file);
                }
            }
        }
    }

    @Test
    void everyDashboardQueryAndEveryAlertsMetricsReturnSeriesAndEveryRuleEvaluates() throws Exception {
        makePurchases();

        Map<String, String> queries = new LinkedHashMap<>(PrometheusRulesTest.dashboardQueries());
        for (Map<String, Object> alert : PrometheusRulesTest.alerts()) {
            String expr = (String) alert.get("expr");
            Matcher selector = SELECTOR.matcher(expr);
            while (selector.find()) {
                queries.put(alert.get("alert") + ": " + selector.group(), selector.group());
            }
        }
        Set<String> empty = new LinkedHashSet<>(queries.keySet());
        await("series for every query").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(3))
                .untilAsserted(() -> {
                    for (String name : List.copyOf(empty)) {
                        if (!result(queries.get(name)).isEmpty()) {
                            empty.remove(name);
                        }
                    }
                    assertThat(empty).as("queries without series").isEmpty();
                });

        // The series carry what happened: every accepted purchase was counted and stored. A
        // refused one (503: no confirm in time) may still arrive once the alarm clears.
        await("the purchases in the metrics").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(2))
                .untilAsserted(() -> {
                    double accepted = value("sum(api_purchases_accepted_total)");
                    double refused = value("sum(api_purchases_refused_total)");
                    assertThat(accepted).isGreaterThanOrEqualTo(ACCEPTED);
                    assertThat(refused).isPositive();
                    assertThat(value("sum(store_purchases_applied_total)")).isBetween(accepted, accepted + refused);
                    assertThat(value("sum(purchases_stored_total)")).isBetween(accepted, accepted + refused);
                });

        for (Map<String, Object> alert : PrometheusRulesTest.alerts()) {
            result((String) alert.get("expr")); // runs without a PromQL error (an alert that is not firing has no series)
        }
        await("every rule evaluated").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<Map<String, Object>> rules = new ArrayList<>();
            for (Object group : (List<?>) DeploymentFiles.map(prometheus("/api/v1/rules").get("data")).get("groups")) {
                for (Object rule : (List<?>) DeploymentFiles.map(group).get("rules")) {
                    rules.add(DeploymentFiles.map(rule));
                }
            }
            assertThat(rules).hasSize(PrometheusRulesTest.alerts().size())
                    .allSatisfy(rule -> assertThat(rule.get("health")).as("%s: %s", rule.get("name"), rule.get("lastError"))
                            .isEqualTo("ok"));
        });
    }

    /**
     * The alerts' and panels' shard matcher against this mode's real queue series: it finds
     * every shard queue of both sharded exchanges and none of the other queues the broker
     * reports (the parking queue, the store query queue), and the no-consumer alert's expression
     * is empty while every shard is consumed.
     */
    @Test
    void theShardMatcherFindsEveryShardQueueOfThisModeAndNoOtherQueue() throws Exception {
        Set<String> shards = new TreeSet<>();
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            shards.addAll(mode == TopologyMode.REPLICATED
                    ? Topology.replicatedShards(exchange, BrokerTopology.DEFAULT_REPLICATED_SHARDS)
                    : broker.shardQueues(exchange));
        }
        assertThat(shards).as("shard queues of the %s mode", mode).hasSizeGreaterThanOrEqualTo(4);
        String shardConsumers = "sum by (queue) (rabbitmq_detailed_queue_consumers{queue=~\"" + PrometheusRulesTest.SHARD_QUEUES + "\"})";

        await("the shard queues' series").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(2))
                .untilAsserted(() -> {
                    assertThat(queues("sum by (queue) (rabbitmq_detailed_queue_consumers)"))
                            .contains(Topology.PARKING_QUEUE, Topology.STORE_RPC_QUEUE).containsAll(shards);
                    assertThat(queues(shardConsumers)).isEqualTo(shards);
                });
        assertThat(result(alertExpression("SupermarketShardWithoutConsumer"))).as("shards without a consumer").isEmpty();
    }

    @Test
    void actuatorAnswersOnlyOnTheManagementPortNeverOnTheApiPort() throws Exception {
        for (int i = 0; i < 3; i++) {
            for (String path : List.of("/actuator/health", "/actuator/prometheus")) {
                assertThat(get("http://127.0.0.1:" + (API + i) + path).statusCode()).as("API port, " + path).isEqualTo(404);
                assertThat(get("http://127.0.0.1:" + (MANAGEMENT + i) + path).statusCode()).as("management port, " + path)
                        .isEqualTo(200);
            }
        }
    }

    /** Accepted (201), rejected (400: no such store) and refused (503: the broker blocks publishers) purchases. */
    private static void makePurchases() throws Exception {
        for (int i = 0; i < ACCEPTED; i++) {
            assertThat(purchase(1 + i % 8).statusCode()).isEqualTo(201);
        }
        assertThat(purchase(999_999).statusCode()).isEqualTo(400);
        node.raiseMemoryAlarm();
        try {
            await("a refusal while the broker blocks publishers").atMost(Duration.ofMinutes(1))
                    .until(() -> purchase(1).statusCode() == 503);
        } finally {
            node.clearMemoryAlarm();
        }
        await("accepted again").atMost(Duration.ofMinutes(1)).until(() -> purchase(2).statusCode() == 201);
    }

    private static HttpResponse<String> purchase(int store) throws IOException, InterruptedException {
        String body = "{\"items\":[{\"ItemID\":\"" + (1 + store % 50) + "\",\"numberOfItems\":2}]}";
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + API + "/purchase/" + store
                        + "/customer/" + (store * 1000) + "/date/20210101"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The result vector of an instant query; fails on a PromQL error. */
    private static List<?> result(String query) throws Exception {
        Map<String, Object> answer = prometheus("/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
        assertThat(answer.get("status")).as("%s: %s", query, answer.get("error")).isEqualTo("success");
        return (List<?>) DeploymentFiles.map(answer.get("data")).get("result");
    }

    /** The queue labels of an instant query's series. */
    private static Set<String> queues(String query) throws Exception {
        Set<String> queues = new TreeSet<>();
        for (Object series : result(query)) {
            queues.add((String) DeploymentFiles.map(DeploymentFiles.map(series).get("metric")).get("queue"));
        }
        return queues;
    }

    private static String alertExpression(String name) {
        return PrometheusRulesTest.alerts().stream().filter(alert -> name.equals(alert.get("alert")))
                .map(alert -> (String) alert.get("expr")).findFirst().orElseThrow();
    }

    /** The single value of an instant query that returns one series. */
    private static double value(String query) throws Exception {
        List<?> result = result(query);
        assertThat(result).as(query).hasSize(1);
        return Double.parseDouble(String.valueOf(((List<?>) DeploymentFiles.map(result.getFirst()).get("value")).get(1)));
    }

    private static Map<String, Object> prometheus(String path) throws Exception {
        return new Yaml().load(get("http://127.0.0.1:" + PROMETHEUS + path).body());
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** {@code env} and the topology mode of the running invocation. */
    private static Map<String, String> inMode(Map<String, String> env) {
        Map<String, String> all = new HashMap<>(env);
        all.put("BROKER_TOPOLOGY_MODE", topology.name().toLowerCase(Locale.ROOT));
        return all;
    }

    private static void startPrometheus() throws Exception {
        String scrape = """
                  - job_name: supermarket-%s
                    metrics_path: /actuator/prometheus
                    static_configs: [{targets: ["127.0.0.1:%d"]}]
                """;
        Files.writeString(dir.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 2s
                  evaluation_interval: 2s
                rule_files: ["%s"]
                scrape_configs:
                %s%s%s  - job_name: supermarket-rabbitmq
                    static_configs: [{targets: ["%s"]}]
                  - job_name: supermarket-rabbitmq-detailed
                    metrics_path: /metrics/detailed
                    params: {family: [queue_coarse_metrics, queue_consumer_count], vhost: ["%s"]}
                    static_configs: [{targets: ["%s"]}]
                """.formatted(PrometheusRulesTest.RULES, scrape.formatted("purchase-api", MANAGEMENT),
                scrape.formatted("store-service", MANAGEMENT + 1), scrape.formatted("purchases-service", MANAGEMENT + 2),
                node.prometheusUri().getAuthority(), broker.vhost(), node.prometheusUri().getAuthority()));
        processes.start(new ProcessBuilder("prometheus", "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + PROMETHEUS), "prometheus");
        await("Prometheus").atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> get("http://127.0.0.1:" + PROMETHEUS + "/-/ready").statusCode() == 200);
    }
}
