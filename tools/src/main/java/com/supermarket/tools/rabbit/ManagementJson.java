package com.supermarket.tools.rabbit;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeMap;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the scripts read from RabbitMQ's management API (and {@code rabbitmqctl --formatter json}):
 * the answers of {@code /api/queues}, {@code /api/connections} and {@code cluster_status}, parsed.
 * Stateless; thread-safe.
 */
public final class ManagementJson {

    /** The sharded exchanges whose shard queues the balance table reads. */
    public static final List<String> SHARDED_EXCHANGES = List.of("purchaseX", "storeX");

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private ManagementJson() {
    }

    static JsonNode parse(String text) {
        return JSON.readTree(text);
    }

    /**
     * Whether {@code queue} is a shard queue of {@code exchange}: the sharding plugin's
     * "sharding: EXCHANGE - ..." or the replicated mode's "EXCHANGE.shard.N".
     */
    public static boolean isShardQueue(String queue, String exchange) {
        return queue.startsWith("sharding: " + exchange + " - ") || queue.startsWith(exchange + ".shard.");
    }

    /**
     * From {@code /api/queues?columns=name,message_stats.publish}: the messages each shard queue of
     * the sharded exchanges received, by queue name (sorted); a queue without statistics yet counts 0.
     */
    public static Map<String, Long> shardPublished(String queuesJson) {
        Map<String, Long> counts = new TreeMap<>();
        for (JsonNode queue : parse(queuesJson)) {
            String name = queue.path("name").asString();
            if (SHARDED_EXCHANGES.stream().anyMatch(x -> isShardQueue(name, x))) {
                counts.put(name, queue.path("message_stats").path("publish").asLong(0));
            }
        }
        return counts;
    }

    /** From {@code /api/queues?columns=name,messages}: the messages ready and unacknowledged in all; empty when no queue says. */
    public static OptionalLong messages(String queuesJson) {
        long sum = 0;
        boolean any = false;
        for (JsonNode queue : parse(queuesJson)) {
            JsonNode messages = queue.get("messages");
            if (messages != null && messages.isNumber()) {
                sum += messages.asLong();
                any = true;
            }
        }
        return any ? OptionalLong.of(sum) : OptionalLong.empty();
    }

    /** From {@code rabbitmqctl cluster_status --formatter json}: the running nodes. */
    public static List<String> runningNodes(String clusterStatusJson) {
        List<String> nodes = new ArrayList<>();
        parse(clusterStatusJson).path("running_nodes").forEach(n -> nodes.add(n.asString()));
        return nodes;
    }

    /**
     * From {@code /api/queues?columns=type,leader}: which of {@code nodes} (1-based) leads the most
     * quorum queues (the first of them on a tie); empty when none leads any.
     */
    public static OptionalInt mostLeaders(String queuesJson, List<String> nodes) {
        Map<String, Integer> leading = new LinkedHashMap<>();
        for (JsonNode queue : parse(queuesJson)) {
            String leader = queue.path("leader").asString("");
            if ("quorum".equals(queue.path("type").asString("")) && nodes.contains(leader)) {
                leading.merge(leader, 1, Integer::sum);
            }
        }
        return leading.entrySet().stream()
                .max(Comparator.<Map.Entry<String, Integer>>comparingInt(Map.Entry::getValue)
                        .thenComparing(e -> -nodes.indexOf(e.getKey())))
                .map(e -> OptionalInt.of(nodes.indexOf(e.getKey()) + 1)).orElse(OptionalInt.empty());
    }

    /** From {@code /api/connections?columns=node,name,user_provided_name}: "node name client-name" lines, by node and name. */
    public static List<String> connections(String connectionsJson) {
        List<String[]> rows = new ArrayList<>();
        for (JsonNode c : parse(connectionsJson)) {
            rows.add(new String[] { c.path("node").asString(""), c.path("name").asString(""),
                c.path("user_provided_name").asString("") });
        }
        rows.sort(Comparator.<String[], String>comparing(r -> r[0]).thenComparing(r -> r[1]));
        return rows.stream().map(r -> String.join(" ", r)).toList();
    }
}
