package com.supermarket.tools.logs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the services' JSON log lines say of the broker: warnings, errors and the connection
 * factory's lines, grouped once connection ids, consumer tags and shard numbers are masked, each
 * group with its count and its first and last time. Lines that are not JSON are skipped. Not
 * thread-safe: one summary per reader.
 */
public final class LogSummary {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern VARYING = Pattern.compile("(amq\\.ctag-|identity=|localPort=|index=|Connection@|#|shard\\.)[\\w-]+");
    private static final int MAX_TEXT = 240;

    private record Key(String level, String logger, String text) {
    }

    private static final class Seen {
        final String first;
        String last;
        int count;

        Seen(String first) {
            this.first = first;
        }
    }

    private final Map<Key, Seen> seen = new LinkedHashMap<>();

    /** Takes one log line. */
    public void accept(String line) {
        JsonNode event;
        try {
            event = JSON.readTree(line);
        } catch (JacksonException e) {
            return;
        }
        if (event == null || !event.isObject()) {
            return;
        }
        String level = event.path("log").path("level").asString("");
        String logger = event.path("log").path("logger").asString("");
        if (!level.equals("WARN") && !level.equals("ERROR") && !logger.endsWith("CachingConnectionFactory")) {
            return;
        }
        String text = VARYING.matcher(event.path("message").asString("")).replaceAll("$1*");
        text = text.substring(0, Math.min(MAX_TEXT, text.length()));
        String time = timeOfDay(event.path("@timestamp").asString(""));
        Seen group = seen.computeIfAbsent(new Key(level, logger.substring(logger.lastIndexOf('.') + 1), text), k -> new Seen(time));
        group.last = time;
        group.count++;
    }

    /** "COUNT FIRST-LAST LEVEL LOGGER: TEXT" per group, in the order each group first appeared. */
    public List<String> lines() {
        List<String> lines = new ArrayList<>();
        seen.forEach((key, group) -> lines.add(String.format(Locale.ROOT, "%5d %s-%s %s %s: %s",
                group.count, group.first, group.last, key.level(), key.logger(), key.text())));
        return lines;
    }

    /** HH:MM:SS.mmm of an ISO timestamp (its characters 11 to 23). */
    private static String timeOfDay(String timestamp) {
        return timestamp.length() <= 11 ? "" : timestamp.substring(11, Math.min(23, timestamp.length()));
    }
}
