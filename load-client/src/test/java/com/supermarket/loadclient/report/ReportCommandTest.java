package com.supermarket.loadclient.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.LoadClient;
import com.supermarket.loadclient.result.FullLoad;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.TimelinePoint;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

class ReportCommandTest {

    @TempDir
    Path dir;

    @Test
    void rendersATableAndChartsFromTwoResultFiles() throws Exception {
        Path small = dir.resolve("t2.micro-32.json");
        Path large = dir.resolve("t2.xlarge-64.json");
        ResultFiles.write(result("t2.micro", 32, 1_200, 95.5), small);
        ResultFiles.write(result("t2.xlarge", 64, 4_800, 35.25), large);
        Path out = dir.resolve("report");

        int status = LoadClient.execute("report", small.toString(), large.toString(), "--out-dir", out.toString());

        assertThat(status).isZero();
        String table = Files.readString(out.resolve("report.md"));
        assertThat(table).contains("| t2.micro | 32 |").contains("| t2.xlarge | 64 |").contains("95.5").contains("35.3");
        for (String png : List.of("throughput-vs-stores.png", "p99-vs-stores.png", "timeline-t2.micro-32.png",
                "timeline-t2.xlarge-64.png")) {
            BufferedImage image = ImageIO.read(out.resolve(png).toFile());
            assertThat(image).as(png).isNotNull();
            assertThat(image.getWidth()).isEqualTo(900);
            assertThat(image.getHeight()).isEqualTo(540);
        }
    }

    @Test
    void readsBackWhatRunWrites() {
        Path file = dir.resolve("one.json");
        RunResult written = result("local", 8, 500, 12.5);

        ResultFiles.write(written, file);

        assertThat(ResultFiles.read(file)).isEqualTo(written);
    }

    @Test
    void tablesTheCpuEachProcessSpentPerSuccessfulRequest() throws Exception {
        // 32 stores x 2,700 = 86,400 requests; 17.28 s of client CPU = 0.2 ms each.
        RunResult run = withCpu(result("2cpu", 32, 1_000, 50), 17.28,
                Map.of("purchase-api", 43.2, "beam.smp", 25.92, "mariadbd", 8.64));
        RunResult older = result("1cpu", 32, 500, 90);
        Path one = dir.resolve("one.json");
        Path two = dir.resolve("two.json");
        ResultFiles.write(run, one);
        ResultFiles.write(withCpu(older, 8.64, Map.of("purchase-api", 86.4)), two);
        Path out = dir.resolve("report");

        int status = LoadClient.execute("report", one.toString(), two.toString(), "--out-dir", out.toString());

        assertThat(status).isZero();
        String report = Files.readString(out.resolve("report.md"));
        assertThat(report).contains("## CPU per successful request, ms, by process")
                .contains("| label | stores | mode | offered req/s | load-client | beam.smp | mariadbd | purchase-api | total |")
                .contains("| 1cpu | 32 | closed | - | 0.100 | - | - | 1.000 | 1.100 |")
                .contains("| 2cpu | 32 | closed | - | 0.200 | 0.300 | 0.100 | 0.500 | 1.100 |");
    }

    @Test
    void tablesEachRequestTypeWhileEveryStoreSent() throws Exception {
        Path one = dir.resolve("one.json");
        Path older = dir.resolve("older.json");
        ResultFiles.write(result("peak", 32, 1_000, 40), one);
        // A result written before the window was measured: it has no fullLoad field.
        ObjectNode json = (ObjectNode) JsonMapper.builder().build().readTree(one.toFile());
        json.remove("fullLoad");
        json.put("label", "older");
        Files.writeString(older, json.toString());
        Path out = dir.resolve("report");

        int status = LoadClient.execute("report", one.toString(), older.toString(), "--out-dir", out.toString());

        assertThat(status).isZero();
        assertThat(Files.readString(older)).doesNotContain("fullLoad");
        assertThat(ResultFiles.read(older).fullLoad()).isEqualTo(FullLoad.none());
        assertThat(Files.readString(out.resolve("report.md"))).contains("## While every store sent")
                .contains("| label | stores | mode | offered req/s | seconds | successful req/s | POST p50 / p99 ms "
                        + "| GET_STORE p50 / p99 ms | client loop lag p50 / p99 ms |")
                .contains("| peak | 32 | closed | - | 1.0 | 1,100 | 10.0 / 44.0 | 3.3 / 8.0 | 0.5 / 2.0 |")
                .contains("| older | 32 | closed | - | 0.0 | 0 | - | - | - |");
    }

    @Test
    void drawsLatencyAgainstOfferedLoadForPacedRuns() throws Exception {
        List<Path> files = new java.util.ArrayList<>();
        for (int rate : new int[] { 1000, 2000, 4000, 8000 }) {
            Path file = dir.resolve("paced-" + rate + ".json");
            ResultFiles.write(paced(result("local", 256, rate * 0.98, 10 + rate / 100.0), rate), file);
            files.add(file);
        }
        Path out = dir.resolve("report");
        List<String> args = new java.util.ArrayList<>(List.of("report", "--out-dir", out.toString()));
        files.forEach(file -> args.add(file.toString()));

        int status = LoadClient.execute(args.toArray(String[]::new));

        assertThat(status).isZero();
        BufferedImage chart = ImageIO.read(out.resolve("latency-vs-offered-load.png").toFile());
        assertThat(chart).isNotNull();
        assertThat(chart.getWidth()).isEqualTo(900);
        assertThat(out.resolve("throughput-vs-stores.png")).as("no closed-loop runs, no stores chart").doesNotExist();
        assertThat(out.resolve("timeline-local-256-8000.png")).exists();
        assertThat(Files.readString(out.resolve("report.md"))).contains("| local | 256 | open | 8,000 |");
    }

    static RunResult withCpu(RunResult run, double clientCpu, Map<String, Double> processes) {
        return new RunResult(run.label(), run.baseUrl(), run.mode(), run.parameters(), run.startedAt(),
                run.wallTimeSeconds(), run.successful(), run.failed(), run.throughput(), run.successThroughput(),
                run.failuresByStatus(), run.failuresByError(), run.latency(), run.phases(), run.timeline(),
                run.csvWriterBusySeconds(), run.firstTryFailures(), run.retries(), clientCpu, processes, run.fullLoad(),
                run.purchases(), false, 0, null, null, List.of(), null);
    }

    private static RunResult paced(RunResult run, double rate) {
        RunParameters p = run.parameters();
        return new RunResult(run.label(), run.baseUrl(), "open", new RunParameters(p.maxStores(), p.customersPerStore(),
                p.maxItemId(), p.purchasesPerHour(), p.itemsPerPurchase(), p.date(), p.getRatio(), rate, p.timeoutSeconds(),
                p.retries(), 0, 1), run.startedAt(), run.wallTimeSeconds(), run.successful(), run.failed(), run.throughput(),
                run.successThroughput(), run.failuresByStatus(), run.failuresByError(), run.latency(), run.phases(),
                run.timeline(), run.csvWriterBusySeconds(), run.firstTryFailures(), run.retries(), run.clientCpuSeconds(),
                run.processCpuSeconds(), run.fullLoad(), run.purchases(), false, 0, null, null, List.of(), null);
    }

    static RunResult result(String label, int stores, double throughput, double p99) {
        RunParameters parameters = new RunParameters(stores, 1000, 100_000, 300, 5, "20210101", 0, 0, 30, 0, 0, 1);
        long requests = stores * 9L * 300;
        List<TimelinePoint> timeline = List.of(
                new TimelinePoint(1, throughput * 0.5, 0, p99 / 3, p99, p99 * 2, stores / 4),
                new TimelinePoint(2, throughput, 1, p99 / 3, p99 * 1.2, p99 * 3, stores / 2),
                new TimelinePoint(3, throughput * 1.1, 0, p99 / 2, p99 * 0.9, p99 * 2, stores));
        return new RunResult(label, "http://localhost:8080", "closed", parameters, Instant.parse("2026-01-01T00:00:00Z"),
                requests / throughput, requests, 0, throughput, throughput, Map.of(), Map.of(),
                Map.of(RequestType.POST, latency(requests, p99 / 4, p99 / 5, p99, p99 * 2, p99 * 4)),
                List.of(new PhaseStart("east", 1, stores / 4, 0), new PhaseStart("central", stores / 4 + 1, stores / 2, 1),
                        new PhaseStart("west", stores / 2 + 1, stores, 2)),
                timeline, 0, 0, 0, requests * 20e-6, Map.of("purchase-api", requests * 0.15e-3),
                new FullLoad(1, throughput * 1.1, Map.of(
                        RequestType.POST, latency(requests / 3, p99 / 3, p99 / 4, p99 * 1.1, p99 * 2, p99 * 3),
                        RequestType.GET_STORE, latency(requests / 30, p99 / 10, p99 / 12, p99 / 5, p99 / 4, p99 / 2)),
                        latency(1000, p99 / 40, p99 / 80, p99 / 20, p99 / 10, p99 / 5)),
                new PurchaseOutcomes(requests, 0, 0, null), false, 0, null, null, List.of(), null);
    }

    private static LatencySummary latency(long count, double mean, double median, double p99, double p999, double max) {
        return new LatencySummary(count, mean, median, (median + p99) / 2, (median + p99) / 2, p99, p999, p999, max);
    }
}
