package com.supermarket.tools.rabbit;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The balance over the shard queues of each sharded exchange between two readings of their
 * received-message counts: per exchange the smallest and largest count, max/min, and the queues
 * that received nothing. Stateless.
 */
public final class ShardBalance {

    /** purchaseX first, then storeX and its copy groups storeX.c1, storeX.c2, ... by copy number. */
    private static final Comparator<String> EXCHANGE_ORDER = Comparator
            .comparing((String exchange) -> !exchange.equals("purchaseX"))
            .thenComparingInt(exchange -> exchange.contains(".c") ? Integer.parseInt(exchange.substring(exchange.indexOf(".c") + 2)) : 0);

    private ShardBalance() {
    }

    /** Reads "COUNT QUEUE NAME" lines (the queue name may hold spaces), as shard-counts writes them. */
    public static Map<String, Long> readCounts(String text) {
        Map<String, Long> counts = new TreeMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int space = line.indexOf(' ');
            if (space < 0) {
                throw new IllegalArgumentException("not a 'COUNT QUEUE' line: " + line);
            }
            counts.put(line.substring(space + 1), Long.parseLong(line.substring(0, space)));
        }
        return counts;
    }

    /**
     * The table: per exchange (purchaseX, storeX, then the store copy groups' storeX.c&lt;c&gt; in copy
     * order) a summary line, then each shard queue's messages in between.
     */
    public static List<String> table(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Map<String, Long>> byExchange = new TreeMap<>(EXCHANGE_ORDER);
        ManagementJson.SHARDED_EXCHANGES.forEach(exchange -> byExchange.put(exchange, new TreeMap<>()));
        after.forEach((name, count) -> ManagementJson.shardedExchangeOf(name).ifPresent(exchange ->
                byExchange.computeIfAbsent(exchange, x -> new TreeMap<>()).put(name, count - before.getOrDefault(name, 0L))));
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, Map<String, Long>> entry : byExchange.entrySet()) {
            String exchange = entry.getKey();
            Map<String, Long> got = entry.getValue();
            if (got.isEmpty()) {
                lines.add(exchange + ": no shard queue found");
                continue;
            }
            long low = got.values().stream().mapToLong(Long::longValue).min().orElseThrow();
            long high = got.values().stream().mapToLong(Long::longValue).max().orElseThrow();
            String ratio = low > 0 ? String.format(Locale.ROOT, "%.2f", (double) high / low) : "inf";
            List<String> idle = got.entrySet().stream().filter(e -> e.getValue() == 0).map(Map.Entry::getKey).toList();
            lines.add(String.format(Locale.ROOT, "%s: %d shard queues, messages per queue min %d, max %d, max/min %s%s",
                    exchange, got.size(), low, high, ratio,
                    idle.isEmpty() ? "; every queue received messages"
                            : "; NOTHING reached " + idle.size() + ": " + String.join(", ", idle)));
            got.forEach((name, count) -> lines.add(String.format(Locale.ROOT, "  %9d  %s", count, name)));
        }
        return lines;
    }
}
