package com.supermarket.tools.logs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogSummaryTest {

    private static String line(String time, String level, String logger, String message) {
        return "{\"@timestamp\":\"2026-11-26T" + time + "Z\",\"log\":{\"level\":\"" + level + "\",\"logger\":\"" + logger
                + "\"},\"message\":\"" + message + "\"}";
    }

    @Test
    void groupsLinesThatDifferOnlyInIdsTagsAndShards() {
        LogSummary summary = new LogSummary();
        summary.accept(line("10:00:01.123", "WARN", "o.s.a.r.l.DirectMessageListenerContainer",
                "Consumer amq.ctag-AbC_1 on shard.3 lost, Connection@1a2b"));
        summary.accept("not json");
        summary.accept(line("10:00:02.000", "INFO", "o.s.a.r.c.SomethingElse", "dropped: info of another logger"));
        summary.accept(line("10:00:05.456", "WARN", "o.s.a.r.l.DirectMessageListenerContainer",
                "Consumer amq.ctag-XyZ-9 on shard.7 lost, Connection@ffee"));
        summary.accept(line("10:00:06.000", "INFO", "o.s.a.r.c.CachingConnectionFactory", "Created new connection: identity=42"));
        summary.accept("[1,2]");

        assertThat(summary.lines()).containsExactly(
                "    2 10:00:01.123-10:00:05.456 WARN DirectMessageListenerContainer: Consumer amq.ctag-* on shard.* lost, Connection@*",
                "    1 10:00:06.000-10:00:06.000 INFO CachingConnectionFactory: Created new connection: identity=*");
    }

    @Test
    void cutsLongMessages() {
        LogSummary summary = new LogSummary();
        summary.accept(line("10:00:01.000", "ERROR", "x.Y", "a".repeat(500)));

        assertThat(summary.lines()).singleElement().asString().endsWith(" ERROR Y: " + "a".repeat(240));
    }
}
