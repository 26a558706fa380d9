package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Topology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The alerts and the dashboard the chart ships, checked with the real {@code promtool}
 * (Debian's prometheus package): the rules file parses and its unit tests pass, and every
 * dashboard query is valid PromQL. {@code PrometheusQueriesIT} runs them against live metrics.
 */
class PrometheusRulesTest {

    static final Path RULES = DeploymentFiles.resolve("helm/supermarket/files/prometheus/supermarket-rules.yaml");
    static final Path RULE_TESTS = DeploymentFiles.resolve("helm/supermarket/files/prometheus/supermarket-rules.test.yaml");
    static final Path DASHBOARD = DeploymentFiles.resolve("helm/supermarket/files/grafana/supermarket-dashboard.json");

    /** The queue matcher of every alert and panel that reads the shard queues' series. */
    static final String SHARD_QUEUES = "sharding: .+|.+[.]shard[.][0-9]+";

    private static final Pattern QUEUE_REGEX = Pattern.compile("queue=~\"([^\"]*)\"");

    @Test
    void theRulesFileIsValid() throws Exception {
        assertThat(promtool("check", "rules", RULES.toString())).contains("SUCCESS: " + alerts().size() + " rules found");
    }

    @Test
    void everyAlertFiresInItsUnitTestAndOnlyAfterItsDelay() throws Exception {
        assertThat(promtool("test", "rules", RULE_TESTS.toString())).contains("SUCCESS");
        String tests = DeploymentFiles.read(RULE_TESTS);
        for (Map<String, Object> alert : alerts()) {
            assertThat(tests).as("a unit test of " + alert.get("alert")).contains("alertname: " + alert.get("alert"));
        }
    }

    @Test
    void everyAlertSaysHowUrgentItIsAndWhatToDo() {
        assertThat(alerts()).isNotEmpty().allSatisfy(alert -> {
            assertThat(alert).as("%s", alert.get("alert")).containsKey("for");
            assertThat(DeploymentFiles.map(alert.get("labels"))).containsKey("severity");
            assertThat(DeploymentFiles.map(alert.get("annotations"))).containsKeys("summary", "description");
        });
    }

    /**
     * Prometheus anchors a regex matcher at both ends, as {@link Matcher#matches} does, and this
     * one is plain RE2 syntax that Java reads alike. The copy group exchange {@code storeX.c1}
     * stands for any exchange named after {@code storeX}.
     */
    @Test
    void theShardQueueMatcherTakesTheShardQueuesOfBothModesAndNoOtherQueue() {
        Pattern shards = Pattern.compile(SHARD_QUEUES);
        List<String> shardQueues = new ArrayList<>();
        for (String exchange : List.of(Topology.PURCHASE_EXCHANGE, Topology.STORE_EXCHANGE, Topology.STORE_EXCHANGE + ".c1")) {
            shardQueues.add(Topology.shardQueuePrefix(exchange) + "rabbit@supermarket-rabbitmq-server-2 - 11");
            shardQueues.add(Topology.replicatedShardName(exchange, 0));
            shardQueues.add(Topology.replicatedShardName(exchange, 15));
        }
        assertThat(shardQueues).allSatisfy(queue -> assertThat(shards.matcher(queue).matches()).as(queue).isTrue());
        assertThat(List.of(Topology.PARKING_QUEUE, Topology.STORE_RPC_QUEUE, Topology.storeQueryQueue(1, 4),
                Topology.STORE_EXCHANGE, Topology.PURCHASE_EXCHANGE + ".shard", "amq.gen-JzTY20BRgKO-HjmUJj0wLg"))
                .allSatisfy(queue -> assertThat(shards.matcher(queue).matches()).as(queue).isFalse());

        List<String> expressions = new ArrayList<>(dashboardQueries().values());
        alerts().forEach(alert -> expressions.add((String) alert.get("expr")));
        List<String> matchers = new ArrayList<>();
        for (String expr : expressions) {
            Matcher queue = QUEUE_REGEX.matcher(expr);
            while (queue.find()) {
                matchers.add(queue.group(1));
            }
        }
        assertThat(matchers).as("queue matchers of the alerts and panels").hasSizeGreaterThanOrEqualTo(5)
                .containsOnly(SHARD_QUEUES);
    }

    @Test
    void everyDashboardQueryIsValidPromql(@TempDir Path dir) throws Exception {
        Map<String, String> queries = dashboardQueries();
        assertThat(queries).hasSizeGreaterThanOrEqualTo(6);
        // promtool checks expressions inside rules files: one recording rule per panel query.
        List<Map<String, Object>> rules = new ArrayList<>();
        queries.forEach((name, expr) -> rules.add(Map.of("record", "dashboard:" + name, "expr", expr)));
        Path file = dir.resolve("dashboard-queries.yaml");
        Files.writeString(file, new Yaml().dump(Map.of("groups", List.of(Map.of("name", "dashboard", "rules", rules)))));

        assertThat(promtool("check", "rules", file.toString())).contains("SUCCESS: " + queries.size() + " rules found");
    }

    /** The alerting rules of the rules file. */
    static List<Map<String, Object>> alerts() {
        Map<String, Object> file = new Yaml().load(DeploymentFiles.read(RULES));
        List<Map<String, Object>> alerts = new ArrayList<>();
        for (Object group : (List<?>) file.get("groups")) {
            for (Object rule : (List<?>) DeploymentFiles.map(group).get("rules")) {
                alerts.add(DeploymentFiles.map(rule));
            }
        }
        return alerts;
    }

    /** Every panel query of the dashboard, keyed panel_&lt;id&gt;_&lt;refId&gt;. JSON is YAML, so SnakeYAML reads it. */
    static Map<String, String> dashboardQueries() {
        Map<String, Object> dashboard = new Yaml().load(DeploymentFiles.read(DASHBOARD));
        Map<String, String> queries = new LinkedHashMap<>();
        for (Object panel : (List<?>) dashboard.get("panels")) {
            Map<String, Object> p = DeploymentFiles.map(panel);
            List<?> targets = (List<?>) p.get("targets");
            assertThat(targets).as("targets of panel %s", p.get("title")).isNotEmpty();
            for (Object target : targets) {
                Map<String, Object> t = DeploymentFiles.map(target);
                queries.put("panel_" + p.get("id") + "_" + t.get("refId"), (String) t.get("expr"));
            }
        }
        return queries;
    }

    /** Runs promtool; fails (never skips) when it is missing or answers non-zero. Returns its output. */
    static String promtool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("promtool"));
        command.addAll(List.of(args));
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError("promtool is needed (Debian: apt-get install prometheus): " + e.getMessage(), e);
        }
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("%s:%n%s", command, output).isZero();
        return output;
    }
}
