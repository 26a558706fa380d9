package com.supermarket.loadclient.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.LoadClient;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.TimelinePoint;

class ReportCommandTest {

    @TempDir
    Path dir;

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

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

    private static RunResult result(String label, int stores, double throughput, double p99) {
        RunParameters parameters = new RunParameters(stores, 1000, 100_000, 300, 5, "20210101", 0, 0, 30, 0);
        long requests = stores * 9L * 300;
        List<TimelinePoint> timeline = List.of(
                new TimelinePoint(1, throughput * 0.5, 0, p99 / 3, p99, p99 * 2, stores / 4),
                new TimelinePoint(2, throughput, 1, p99 / 3, p99 * 1.2, p99 * 3, stores / 2),
                new TimelinePoint(3, throughput * 1.1, 0, p99 / 2, p99 * 0.9, p99 * 2, stores));
        return new RunResult(label, "http://localhost:8080", "closed", parameters, Instant.parse("2026-01-01T00:00:00Z"),
                requests / throughput, requests, 0, throughput, throughput, Map.of(), Map.of(),
                Map.of(RequestType.POST, new LatencySummary(requests, p99 / 4, p99 / 5, p99, p99 * 2, p99 * 4)),
                List.of(new PhaseStart("east", 1, stores / 4, 0), new PhaseStart("central", stores / 4 + 1, stores / 2, 1),
                        new PhaseStart("west", stores / 2 + 1, stores, 2)),
                timeline, 0, 0, 0, requests * 20e-6, Map.of("purchase-api", requests * 0.15e-3));
    }
}
