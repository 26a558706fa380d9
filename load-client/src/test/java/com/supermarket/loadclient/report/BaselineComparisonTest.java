package com.supermarket.loadclient.report;

import static com.supermarket.loadclient.report.ReportCommandTest.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.LoadClient;
import com.supermarket.loadclient.report.BaselineComparison.Delta;
import com.supermarket.loadclient.report.BaselineComparison.Verdict;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunResult;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

class BaselineComparisonTest {

    private static final RunResult BASELINE = result("base", 32, 1_000, 40);

    @TempDir
    Path dir;

    @Test
    void higherLatencyIsWorseAndLowerIsBetter() {
        Map<String, Verdict> slower = verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 1_000, 50), 0.1));
        Map<String, Verdict> faster = verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 1_000, 20), 0.1));

        for (String metric : List.of("POST p50 ms", "POST p90 ms", "POST p99 ms", "POST p99.9 ms")) {
            assertThat(slower).as(metric).containsEntry(metric, Verdict.FAIL);
            assertThat(faster).as(metric).containsEntry(metric, Verdict.PASS);
        }
        assertThat(slower).containsEntry("successful req/s", Verdict.PASS);
    }

    @Test
    void lowerThroughputIsWorseAndHigherIsBetter() {
        assertThat(verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 800, 40), 0.1)))
                .containsEntry("successful req/s", Verdict.FAIL).containsEntry("POST p99 ms", Verdict.PASS);
        assertThat(verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 2_000, 40), 0.1)))
                .containsEntry("successful req/s", Verdict.PASS);
    }

    @Test
    void aChangeOfExactlyTheTolerancePassesAndJustBeyondFails() {
        assertThat(verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 900, 44), 0.1)))
                .containsEntry("successful req/s", Verdict.PASS).containsEntry("POST p50 ms", Verdict.PASS)
                .containsEntry("POST p99 ms", Verdict.PASS);
        assertThat(verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 899, 44.01), 0.1)))
                .containsEntry("successful req/s", Verdict.FAIL).containsEntry("POST p99 ms", Verdict.FAIL);
        assertThat(verdicts(BaselineComparison.compare(BASELINE, result("new", 32, 1_000, 40.01), 0)))
                .containsEntry("POST p99 ms", Verdict.FAIL).containsEntry("successful req/s", Verdict.PASS);
    }

    @Test
    void anyFailureFailsAgainstABaselineWithoutFailures() throws Exception {
        RunResult oneFailed = edited(result("new", 32, 1_000, 40), json -> json.put("failed", 1));

        List<Delta> deltas = BaselineComparison.compare(BASELINE, oneFailed, 0.5);

        assertThat(verdicts(deltas)).containsEntry("failed %", Verdict.FAIL);
        assertThat(BaselineComparison.passed(deltas)).isFalse();
        assertThat(BaselineComparison.markdown(deltas)).contains("| failed % | lower | 0.000 | 0.001 | +inf | **FAIL** |");
        assertThat(verdicts(BaselineComparison.compare(BASELINE, BASELINE, 0))).containsEntry("failed %", Verdict.PASS);
    }

    @Test
    void metricsMissingFromAnOlderFileAreShownAndNotJudged() throws Exception {
        // Written before p90 and CPU were recorded: no p90Ms, no clientCpuSeconds, no processCpuSeconds.
        RunResult older = edited(BASELINE, json -> {
            ((ObjectNode) json.get("latency").get("POST")).remove("p90Ms");
            json.remove("clientCpuSeconds");
            json.remove("processCpuSeconds");
        });
        // Much worse where both have the metric, so only the missing ones can pass.
        RunResult slower = result("new", 32, 1_000, 80);

        List<Delta> deltas = BaselineComparison.compare(older, slower, 0.1);

        assertThat(verdicts(deltas)).containsEntry("POST p90 ms", Verdict.NOT_JUDGED)
                .containsEntry("CPU ms/request load-client", Verdict.NOT_JUDGED)
                .containsEntry("CPU ms/request purchase-api", Verdict.NOT_JUDGED)
                .containsEntry("POST p99 ms", Verdict.FAIL);
        assertThat(BaselineComparison.markdown(deltas)).contains("| POST p90 ms | lower | - | 48.000 | - | missing, not judged |");
        List<Delta> missingOnly = BaselineComparison.compare(older, BASELINE, 0.1);
        assertThat(BaselineComparison.passed(missingOnly)).isTrue();
    }

    @Test
    void readsTheToleranceAsAPercentage() {
        assertThat(BaselineComparison.parseTolerance("10%")).isEqualTo(0.1);
        assertThat(BaselineComparison.parseTolerance(" 2.5 ")).isEqualTo(0.025);
        assertThat(BaselineComparison.parseTolerance("0%")).isZero();
        assertThatIllegalArgumentException().isThrownBy(() -> BaselineComparison.parseTolerance("-1%"));
        assertThatIllegalArgumentException().isThrownBy(() -> BaselineComparison.parseTolerance("ten"));
    }

    @Test
    void reportExitsNinetyNineWhenAMetricIsWorseThanTheBaseline() throws Exception {
        Path base = dir.resolve("base.json");
        Path same = dir.resolve("same.json");
        Path slower = dir.resolve("slower.json");
        ResultFiles.write(BASELINE, base);
        ResultFiles.write(result("same", 32, 1_000, 41), same);
        ResultFiles.write(result("slower", 32, 1_000, 60), slower);

        int passing = LoadClient.execute("report", same.toString(), "--baseline", base.toString(), "--out-dir",
                dir.resolve("ok").toString());
        int failing = LoadClient.execute("report", same.toString(), slower.toString(), "--baseline", base.toString(),
                "--tolerance", "20%", "--out-dir", dir.resolve("worse").toString());

        assertThat(passing).isZero();
        assertThat(Files.readString(dir.resolve("ok/report.md"))).contains("## Against the baseline base.json, tolerance 10%")
                .contains("| same, 32 stores | POST p99 ms | lower | 40.000 | 41.000 | +2.5% | pass |")
                .contains("Every judged metric passed.");
        assertThat(failing).isEqualTo(99);
        assertThat(Files.readString(dir.resolve("worse/report.md")))
                .contains("| slower, 32 stores | POST p99 ms | lower | 40.000 | 60.000 | +50.0% | **FAIL** |")
                .contains("| same, 32 stores | POST p99 ms | lower | 40.000 | 41.000 | +2.5% | pass |")
                .contains("**FAILED**");
    }

    private static Map<String, Verdict> verdicts(List<Delta> deltas) {
        return deltas.stream().collect(Collectors.toMap(Delta::metric, Delta::verdict));
    }

    /** {@code run} written to JSON, edited as a file of another version would be, and read back. */
    private RunResult edited(RunResult run, Consumer<ObjectNode> edit) throws Exception {
        Path file = dir.resolve("edited.json");
        ResultFiles.write(run, file);
        ObjectNode json = (ObjectNode) JsonMapper.builder().build().readTree(file.toFile());
        edit.accept(json);
        Files.writeString(file, json.toString());
        return ResultFiles.read(file);
    }
}
