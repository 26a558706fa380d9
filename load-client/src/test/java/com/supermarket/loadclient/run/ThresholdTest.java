package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.FullLoad;
import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.result.ThresholdResult;

class ThresholdTest {

    // POST: p50 1, p90 2, p95 3, p99 40, p99.9 60, p99.99 70, max 80, mean 5 ms; 9,990 successful, 10 failed.
    private static final RunResult RUN = new RunResult("t", "http://x", "closed", Runs.standard(1, 1),
            Instant.EPOCH, 10, 9_990, 10, 1_000, 999, Map.of(), Map.of(),
            Map.of(RequestType.POST, new LatencySummary(9_990, 5, 1, 2, 3, 40, 60, 70, 80)), List.of(), List.of(), 0, 0,
            0, 0, Map.of(), FullLoad.none(), null, false, 0, null, null, List.of(), null);

    @Test
    void readsEveryLatencyStatisticOfEveryRequestTypeInMilliseconds() {
        Threshold threshold = Threshold.parse("POST.p99<50ms");
        assertThat(threshold.metric()).isEqualTo("POST.p99");
        assertThat(threshold.type()).isEqualTo(RequestType.POST);
        assertThat(threshold.operator()).isEqualTo("<");
        assertThat(threshold.limit()).isEqualTo(50.0);
        assertThat(threshold.unit()).isEqualTo("ms");

        assertThat(Threshold.parse("post.P99.9 <= 1.5s").limit()).isEqualTo(1500.0);
        assertThat(Threshold.parse("GET_STORE.p99.99>250us").limit()).isEqualTo(0.25);
        assertThat(Threshold.parse("GET_TOP10.max<20").limit()).as("bare: ms").isEqualTo(20.0);
        assertThat(Threshold.parse("GET_TOP10.mean >= 1").type()).isEqualTo(RequestType.GET_TOP10);
        assertThat(List.of("p50", "p90", "p95", "p99", "p99.9", "p99.99", "max", "mean"))
                .allSatisfy(stat -> assertThat(Threshold.parse("POST." + stat + "<1").metric()).isEqualTo("POST." + stat));
    }

    @Test
    void checksEachStatisticAgainstTheRun() {
        Map<String, Boolean> verdicts = Map.of(
                "POST.p50<=1ms", true, "POST.p90<2ms", false, "POST.p95<3.1", true, "POST.p99<50ms", true,
                "POST.p99.9<60", false, "POST.p99.99<=70ms", true, "POST.max<0.08s", false, "POST.mean>4.9", true);
        verdicts.forEach((expression, holds) -> assertThat(Threshold.parse(expression).check(RUN).passed())
                .as(expression).isEqualTo(holds));

        ThresholdResult p99 = Threshold.parse("POST.p99<50ms").check(RUN);
        assertThat(p99.measured()).isEqualTo(40.0);
        assertThat(p99.threshold()).isEqualTo("POST.p99<50ms");
    }

    @Test
    void failedIsAShareOfTheRequestsWithAPercentSignAndACountWithout() {
        ThresholdResult ratio = Threshold.parse("failed<0.1%").check(RUN);
        assertThat(ratio.measured()).isEqualTo(0.1);
        assertThat(ratio.unit()).isEqualTo("%");
        assertThat(ratio.passed()).as("0.1% is not below 0.1%").isFalse();
        assertThat(Threshold.parse("failed<=0.1%").check(RUN).passed()).isTrue();

        ThresholdResult count = Threshold.parse("failed<=10").check(RUN);
        assertThat(count.measured()).isEqualTo(10.0);
        assertThat(count.unit()).isEqualTo("requests");
        assertThat(count.passed()).isTrue();
        assertThat(Threshold.parse("failed<10").check(RUN).passed()).isFalse();
    }

    @Test
    void rpsIsTheSuccessfulRequestsPerSecondOfTheRun() {
        assertThat(Threshold.parse("rps>998").check(RUN).passed()).isTrue();
        assertThat(Threshold.parse("rps>=1000").check(RUN).measured()).isEqualTo(999.0);
        assertThat(Threshold.parse("rps>=1000").check(RUN).passed()).isFalse();
    }

    @Test
    void aTypeWithNoSuccessfulRequestFailsWithNothingMeasured() {
        ThresholdResult none = Threshold.parse("GET_STORE.p99<1s").check(RUN);

        assertThat(none.measured()).isNull();
        assertThat(none.passed()).isFalse();
    }

    @Test
    void refusesWhatItCannotReadAndSaysWhatItAccepts() {
        Map<String, String> refusals = Map.of(
                "POST.p99", "not METRIC OP VALUE",
                "POST.p98<5ms", "no metric 'POST.p98'",
                "PUT.p99<5ms", "no request type 'PUT'",
                "POST.p99<5kg", "a latency takes ms, s or us",
                "failed<0.5", "a whole count",
                "failed<3ms", "a share of the requests",
                "rps>5k", "bare number",
                "POST.p99=5ms", "not METRIC OP VALUE");
        refusals.forEach((expression, why) -> assertThatThrownBy(() -> Threshold.parse(expression)).as(expression)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + expression + "'").hasMessageContaining(why)
                .hasMessageContaining("expected METRIC OP VALUE"));
    }

    @Test
    void theSyntaxNamesEveryRequestType() {
        for (RequestType type : RequestType.values()) {
            assertThat(Threshold.SYNTAX).contains(type.csvName());
        }
    }
}
