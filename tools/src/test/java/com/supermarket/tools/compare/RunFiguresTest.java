package com.supermarket.tools.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;

class RunFiguresTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** A 2-second closed-loop run from epoch 10 s: 1,000 purchases, 600 in its first second. */
    private static JsonNode result(boolean withOutcomes) throws Exception {
        return JSON.readTree("""
                {"label": "local-mysql", "startedAt": "1970-01-01T00:00:10Z", "wallTimeSeconds": 2.0, "throughput": 500.0,
                 "parameters": {"maxStores": 256, "rate": 0.0},
                 "latency": {"POST": {"count": 1000, "medianMs": 4.5, "p99Ms": 30.25}},
                 %s
                 "timeline": [{"atSeconds": 1.0, "requestsPerSecond": 600.0}, {"atSeconds": 2.0, "requestsPerSecond": 400.0}]}
                """.formatted(withOutcomes ? "\"purchases\": {\"accepted\": 1000}," : ""));
    }

    // Stored lags: 300 by 11 s, 900 by 12 s, all 1,000 (and counted) by 12.5 s. CPU: the API 100
    // ticks over run and drain (1 s of CPU), the broker 50.
    private static final String CSV = """
            epoch_ms,stored,counted,api_messages,purchase-api_ticks,broker_ticks
            10000,0,0,0,1000,500
            11000,300,400,20,1050,520
            12000,900,950,45,1090,540
            12500,1000,1000,50,1100,550
            13000,1000,1000,50,1100,550
            """;

    @Test
    void figuresOfARunAndItsDrain() throws Exception {
        RunFigures figures = RunFigures.of(result(true), PipelineSamples.parse(CSV),
                "purchaseX: 4 shard queues, messages per queue min 10, max 12, max/min 1.20; every queue received messages\n", 100);
        assertThat(figures.run()).isEqualTo("local-mysql, 256 stores, closed loop");
        assertThat(figures.requestsPerSecond()).isEqualTo(500);
        assertThat(figures.postP50Ms()).isEqualTo(4.5);
        assertThat(figures.postP99Ms()).isEqualTo(30.25);
        assertThat(figures.accepted()).isEqualTo(1000);
        assertThat(figures.drainSeconds()).isCloseTo(0.5, within(1e-9));
        assertThat(figures.storedPerSecond()).isCloseTo(1000 / 2.5, within(1e-9));
        assertThat(figures.perMessage()).isCloseTo(20, within(1e-9));
        // Accepted 600 by 11 s against 300 stored; 1,000 by 12 s against 900.
        assertThat(figures.backlogPeak()).isEqualTo(300);
        assertThat(figures.balance()).isEqualTo("1.20 (4 queues)");
        assertThat(figures.cpuMsPerPurchase()).containsEntry("purchase-api", 1.0).containsEntry("broker", 0.5);
        assertThat(figures.totalCpuMsPerPurchase()).isCloseTo(1.5, within(1e-9));
    }

    @Test
    void anOlderResultCountsItsPostsAsAcceptedAndAPacedRunSaysItsRate() throws Exception {
        JsonNode paced = result(false);
        ((tools.jackson.databind.node.ObjectNode) paced.path("parameters")).put("rate", 1000.0);
        RunFigures figures = RunFigures.of(paced, PipelineSamples.parse(CSV), "", 100);
        assertThat(figures.accepted()).isEqualTo(1000);
        assertThat(figures.run()).isEqualTo("local-mysql, 256 stores, paced 1000/s");
        assertThat(figures.balance()).isEmpty();
    }

    @Test
    void aDrainNeverSeenLeavesItsFiguresOpen() throws Exception {
        RunFigures figures = RunFigures.of(result(true), PipelineSamples.parse(CSV.replace("12500,1000,1000", "12500,990,1000")
                .replace("13000,1000,1000", "13000,990,1000")), "", 100);
        assertThat(figures.drainSeconds()).isNaN();
        assertThat(figures.storedPerSecond()).isNaN();
        assertThat(figures.cpuMsPerPurchase().get("broker")).isNaN();
        assertThat(figures.requestsPerSecond()).isEqualTo(500);
    }

    @Test
    void acceptedOverTimeFollowsTheTimeline() throws Exception {
        JsonNode timeline = result(true).path("timeline");
        assertThat(RunFigures.acceptedBy(timeline, 1000, 0.5)).isCloseTo(300, within(1e-9));
        assertThat(RunFigures.acceptedBy(timeline, 1000, 1.0)).isCloseTo(600, within(1e-9));
        assertThat(RunFigures.acceptedBy(timeline, 1000, 5.0)).isCloseTo(1000, within(1e-9));
    }
}
