package com.supermarket.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The commands as the scripts call them: arguments, files, what they print and their exit status. */
class ToolsTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private PrintStream originalOut;

    @BeforeEach
    void captureOut() {
        originalOut = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreOut() {
        System.setOut(originalOut);
    }

    private String printed() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private Path file(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void metricPrintsTheSumAsAWholeNumber() throws Exception {
        Path scrape = file("scrape.txt", """
                http_server_requests_seconds_count{method="POST",status="201"} 1200.0
                http_server_requests_seconds_count{method="POST",status="503"} 3.0
                http_server_requests_seconds_count{method="GET",status="200"} 50.0
                """);

        assertThat(Tools.execute("metric", "http_server_requests_seconds_count", "--label", "method=POST", scrape.toString())).isZero();
        assertThat(printed()).isEqualTo("1203" + System.lineSeparator());
    }

    @Test
    void metricPrintsNothingAndExitsOneWhenTheMetricIsMissingOrZeroMeansUnknown() throws Exception {
        Path scrape = file("scrape.txt", "jvm_gc_live_data_size_bytes 0.0\n");

        assertThat(Tools.execute("metric", "api_purchases_accepted_total", scrape.toString())).isEqualTo(1);
        assertThat(Tools.execute("metric", "jvm_gc_live_data_size_bytes", "--zero-as-none", scrape.toString())).isEqualTo(1);
        assertThat(printed()).isEmpty();
    }

    @Test
    void metricLinesPrintsThePositiveSamplesAsWritten() throws Exception {
        Path scrape = file("scrape.txt", """
                api_purchases_refused_total{reason="broker"} 12.0
                api_purchases_refused_total{reason="overload"} 0.0
                """);

        assertThat(Tools.execute("metric", "api_purchases_refused_total", "--lines", "--positive", scrape.toString())).isZero();
        assertThat(printed().lines()).containsExactly("api_purchases_refused_total{reason=\"broker\"} 12.0");
    }

    @Test
    void shardCountsThenShardBalance() throws Exception {
        Path queues = file("queues.json", """
                [{"name":"purchaseX.shard.0","message_stats":{"publish":10}},
                 {"name":"purchaseX.shard.1","message_stats":{"publish":4}},
                 {"name":"storeX.shard.0"},
                 {"name":"purchases.dlq","message_stats":{"publish":99}}]
                """);

        assertThat(Tools.execute("shard-counts", queues.toString())).isZero();
        assertThat(printed().lines()).containsExactly("10 purchaseX.shard.0", "4 purchaseX.shard.1", "0 storeX.shard.0");

        Path before = file("before", "2 purchaseX.shard.0\n1 purchaseX.shard.1\n0 storeX.shard.0\n");
        Path after = file("after", printed());
        out.reset();
        assertThat(Tools.execute("shard-balance", before.toString(), after.toString())).isZero();
        assertThat(printed()).contains("purchaseX: 2 shard queues, messages per queue min 3, max 8, max/min 2.67")
                .contains("storeX: 1 shard queues, messages per queue min 0, max 0, max/min inf; NOTHING reached 1: storeX.shard.0");
    }

    @Test
    void queueDepthAndMostLeadersSayWhenThereIsNothingToTell() throws Exception {
        Path noQueues = file("queues.json", "[]");
        Path leaders = file("leaders.json", "[{\"type\":\"quorum\",\"leader\":\"rabbit@b\"}]");

        assertThat(Tools.execute("queue-depth", noQueues.toString())).isEqualTo(1);
        assertThat(Tools.execute("most-leaders", "--node", "rabbit@a", "--node", "rabbit@b", leaders.toString())).isZero();
        assertThat(Tools.execute("most-leaders", "--node", "rabbit@a", noQueues.toString())).isEqualTo(1);
        assertThat(printed().lines()).containsExactly("2");
    }

    @Test
    void throughputAgainstABaseline() {
        assertThat(Tools.execute("throughput", "3000", "100.5", "110.5", "--baseline", "400")).isZero();
        assertThat(Tools.execute("throughput", "3000", "100.5", "110.5")).isZero();
        assertThat(printed().lines()).containsExactly("300 75%", "300 n/a");
    }

    @Test
    void soakPlanPrintsPurchasesPerHourAndFaultSeconds() {
        assertThat(Tools.execute("soak-plan", "--minutes", "60", "--rate", "100", "--stores", "10", "--get-ratio", "0.5",
                "--fault-every", "2.5")).isZero();
        assertThat(Tools.execute("soak-plan", "--minutes", "0.1", "--rate", "1", "--stores", "50")).isEqualTo(1);
        assertThat(printed().lines()).containsExactly("2667 150", "0 0");
    }

    @Test
    void aBadArgumentIsAUsageError() {
        assertThat(Tools.execute("throughput", "many", "1", "2")).isEqualTo(2);
        assertThat(Tools.execute("no-such-command")).isEqualTo(2);
    }
}
