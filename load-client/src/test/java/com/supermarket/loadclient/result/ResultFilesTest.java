package com.supermarket.loadclient.result;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultFilesTest {

    @Test
    void readsAResultWrittenBeforeTheNewerFieldsWithTheirNeutralValues() {
        // Written by the client of 2026-11-22, before durations, p90/p95/p99.99, pacing and environments.
        RunResult old = ResultFiles.read(Path.of("docs/benchmark-local/local-mysql-32.json"));

        assertThat(old.successful()).isEqualTo(86_400);
        assertThat(old.parameters().durationSeconds()).isZero();
        assertThat(old.parameters().timed()).isFalse();
        assertThat(old.parameters().maxInFlightPerStore()).isEqualTo(1);
        assertThat(old.postLatency().p99Ms()).isPositive();
        assertThat(old.postLatency().p90Ms()).isZero();
        assertThat(old.interrupted()).isFalse();
        assertThat(old.pacing()).isEqualTo(Pacing.none());
        assertThat(old.thresholds()).isEmpty();
        assertThat(old.environment()).isNull();
        assertThat(old.histogramLog()).isNull();
    }

    @Test
    void writesAndReadsBackTheVerdictAndTheEnvironment(@TempDir Path dir) {
        RunResult old = ResultFiles.read(Path.of("docs/benchmark-local/local-mysql-32.json"));
        RunEnvironment environment = new RunEnvironment("load-client 0.1.0", "abc123", false, "host", "Linux", "cpu", 2,
                1L << 34, "jvm", List.of("-Xmx1g"), 1.5, 2.5, List.of("run", "-s", "32"), Map.of("--max-stores", "32"),
                Map.of("PUBLISH_BATCH_MAX_DELAY", "12ms"));
        RunResult judged = old.withVerdict(List.of(new ThresholdResult("POST.p99<50ms", "POST.p99", "<", 50, "ms", null,
                false)), environment, "local-32.hlog");

        ResultFiles.write(judged, dir.resolve("r.json"));
        RunResult read = ResultFiles.read(dir.resolve("r.json"));

        assertThat(read).isEqualTo(judged);
        assertThat(read.thresholds().getFirst().measured()).isNull();
    }
}
