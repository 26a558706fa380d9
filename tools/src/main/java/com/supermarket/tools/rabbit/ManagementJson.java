package com.supermarket.tools.rabbit;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the scripts read from RabbitMQ's management API (and {@code rabbitmqctl --formatter json}):
 * the answers of {@code /api/queues}, {@code /api/connections} and {@code cluster_status}, parsed.
 * Stateless; thread-safe.
 */
public final class ManagementJson {

    /** The sharded exchanges the balance table always lists, present or not. */
    public static final List<String> SHARDED_EXCHANGES = List.of("purchaseX", "storeX");

    /**
     * A shard queue of a sharded exchange (purchaseX, storeX or a store copy group's storeX.c&lt;c&gt;):
     * the sharding plugin's "sharding: EXCHANGE - NODE - I" or the replicated mode's "EXCHANGE.shard.I";
     * group 1 or 2 is the exchange.
     */
    private static final Pattern SHARD_QUEUE = Pattern.compile(
            "sharding: (purchaseX|storeX(?:\\.c[0-9]+)?) - .+ - [0-9]+|(purchaseX|storeX(?:\\.c[0-9]+)?)\\.shard\\.[0-9]+");

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private ManagementJson() {
    }

    static JsonNode parse(String text) {
        return JSON.readTree(text);
    }

    /** The sharded exchange {@code queue} is a shard queue of; empty for any other queue. */
    public static Optional<String> shardedExchangeOf(String queue) {
        Matcher shard = SHARD_QUEUE.matcher(queue);
        if (!shard.matches()) {
            return Optional.empty();
        }
        return Optional.of(shard.group(1) != null ? shard.group(1) : shard.group(2));
    }

    /**
     * From {@code /api/queues?columns=name,message_stats.publish}: the messages each shard queue of
     * the sharded exchanges (store copy groups included) received, by queue name (sorted); a queue without statistics yet counts 0.
     */
    public static Map<String, Long> shardPublished(String queuesJson) {
        Map<String, Long> counts = new TreeMap<>();
        for (JsonNode queue : parse(queuesJson)) {
            String name = queue.path("name").asString();
            if (shardedExchangeOf(name).isPresent()) {
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
