package com.supermarket.loadclient.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.LoadClient;

class SoakReportCommandTest {

    private static final String HEADER = "t_s,fault,accepted,accepted_per_s,purchase-api_heap_used_bytes,"
            + "purchase-api_heap_live_bytes,store_wal_bytes,store_snapshot_bytes,redis_used_bytes,redis_keys,"
            + "queue_messages,cpu_ms_per_purchase_purchase-api,cpu_ms_per_purchase_beam.smp";

    @TempDir
    Path dir;

    @Test
    void drawsEveryPanelAndPassesASteadyRun() throws Exception {
        Path csv = write(40, false);
        Path png = dir.resolve("soak.png");

        int status = LoadClient.execute("soak-report", csv.toString(), "--chart", png.toString(), "--title", "test soak");

        assertThat(status).isZero();
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(SoakChart.WIDTH);
        // accepted/s, heap, state, queue, keys, CPU: six panels.
        assertThat(image.getHeight()).isEqualTo(6 * SoakChart.PANEL_HEIGHT);
        assertThat(colours(image)).as("colours drawn").isGreaterThan(5);
    }

    @Test
    void failsWhenASizeGrew() throws Exception {
        assertThat(LoadClient.execute("soak-report", write(40, true).toString())).isEqualTo(1);
        assertThat(dir.resolve("soak.png")).as("the chart beside the CSV").isNotEmptyFile();
    }

    @Test
    void failsWhenTheRunIsTooShortToJudge() throws Exception {
        assertThat(LoadClient.execute("soak-report", write(5, false).toString())).isEqualTo(1);
    }

    @Test
    void anUnreadableFileIsExitTwo() throws Exception {
        Path csv = Files.writeString(dir.resolve("bad.csv"), "time,x\n1,2\n");

        assertThat(LoadClient.execute("soak-report", csv.toString())).isEqualTo(2);
        assertThat(LoadClient.execute("soak-report", dir.resolve("missing.csv").toString())).isEqualTo(2);
    }

    @Test
    void emptyCellsAreMissingValuesAndRaggedLinesAreRefused() {
        SoakSamples samples = SoakSamples.parse(List.of("t_s,fault,redis_used_bytes", "0,,5", "15,kill-store-service,"));

        assertThat(samples.faults()).containsExactly("", "kill-store-service");
        assertThat(samples.column("redis_used_bytes")[0]).isEqualTo(5);
        assertThat(samples.column("redis_used_bytes")[1]).isNaN();
        assertThatThrownBy(() -> SoakSamples.parse(List.of("t_s,fault,a", "0,,1,2")))
                .hasMessageContaining("line 2 has 4 cells");
    }

    @Test
    void faultsAreDrawnWhenTheyStruckNotWhenTheyWereSampled() {
        SoakSamples samples = SoakSamples.parse(List.of("t_s,fault,redis_used_bytes", "0,,5",
                "30,kill-store-service@18+broker-restart@27,5", "60,redis-freeze,5", "75,@,5"));

        assertThat(SoakChart.faults(samples)).containsExactly(java.util.Map.entry(0.3, "kill-store-service"),
                java.util.Map.entry(0.45, "broker-restart"), java.util.Map.entry(1.0, "redis-freeze"));
    }

    @Test
    void legendsDropTheUnitTheAxisSays() {
        assertThat(SoakChart.label("cpu_ms_per_purchase_purchase-api")).isEqualTo("purchase-api");
        assertThat(SoakChart.label("store_wal_bytes")).isEqualTo("store_wal");
    }

    /** n samples 20 s apart with a fault every 10; growing: the heap's live size gains 10 MiB a sample. */
    private Path write(int n, boolean growing) throws Exception {
        List<String> lines = new ArrayList<>();
        lines.add(HEADER);
        long mib = 1 << 20;
        for (int i = 0; i < n; i++) {
            long live = growing ? (150 + 10L * i) * mib : 150 * mib;
            lines.add(String.join(",", String.valueOf(i * 20), i % 10 == 5 ? "kill-store-service@" + (i * 20 - 7) : "",
                    String.valueOf(i * 20 * 1000), i % 10 == 6 ? "" : "1000",
                    String.valueOf(200 * mib + (i % 4) * 100 * mib), String.valueOf(live),
                    String.valueOf((i % 6) * 20 * mib), String.valueOf(3 * mib), String.valueOf(Math.min(i, 8) * 10 * mib),
                    String.valueOf(Math.min(i, 8) * 100_000), String.valueOf(i % 3), "0.4", "0.2"));
        }
        return Files.write(dir.resolve("samples.csv"), lines);
    }

    private static int colours(BufferedImage image) {
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 3) {
            for (int x = 0; x < image.getWidth(); x += 3) {
                seen.add(image.getRGB(x, y));
            }
        }
        return seen.size();
    }
}
