package com.supermarket.loadclient.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.soak.GrowthVerdict.Finding;
import com.supermarket.loadclient.soak.GrowthVerdict.Outcome;
import com.supermarket.loadclient.soak.GrowthVerdict.Thresholds;

class GrowthVerdictTest {

    private static final Thresholds DEFAULTS = new Thresholds(0.25, 16 << 20, 1000);
    private static final long MIB = 1 << 20;

    @Test
    void aSawToothWithFaultSpikesIsFlat() {
        // 60 samples: the log climbs from 200 to 600 MiB and falls back every 5 samples (a
        // snapshot); a fault in the last third fills a queue for two samples.
        SoakSamples samples = samples(60, "store_wal_bytes,queue_messages",
                i -> (200 + (i % 5) * 100) * MIB + "," + (i == 50 || i == 51 ? 90_000 : i % 3));

        List<Finding> findings = GrowthVerdict.judge(samples, DEFAULTS);

        assertThat(findings).extracting(Finding::outcome).containsExactly(Outcome.FLAT, Outcome.FLAT);
        assertThat(findings.get(0).middle()).isEqualTo(200.0 * MIB);
        assertThat(GrowthVerdict.passed(findings)).isTrue();
        assertThat(GrowthVerdict.format(findings, DEFAULTS)).contains("growth: nothing grew without bound (2 sizes");
    }

    @Test
    void aFloorThatKeepsRisingGrew() {
        // A leak: the write-ahead log's floor gains 2 MiB a sample, 40 MiB from third to third.
        SoakSamples samples = samples(60, "store_wal_bytes", i -> String.valueOf((10 + 2 * i) * MIB + (i % 4) * 8 * MIB));

        List<Finding> findings = GrowthVerdict.judge(samples, DEFAULTS);

        assertThat(findings).singleElement().extracting(Finding::outcome).isEqualTo(Outcome.GREW);
        assertThat(GrowthVerdict.passed(findings)).isFalse();
        assertThat(GrowthVerdict.format(findings, DEFAULTS))
                .contains("| store_wal_bytes | ").contains("| GREW |")
                .contains("growth: FAILED: grew beyond 25 % and 16.0 MiB or 1,000: store_wal_bytes");
    }

    @Test
    void aRelativeRiseBelowTheAbsoluteMarginIsFlat() {
        // Queue floor 2 -> 40 messages (+1,900 %), and keys 1,000,000 -> 1,200,000 (+20 %): neither is growth.
        SoakSamples samples = samples(30, "queue_messages,redis_keys",
                i -> (i < 20 ? 2 : 40) + "," + (i < 20 ? 1_000_000 : 1_200_000));

        assertThat(GrowthVerdict.judge(samples, DEFAULTS)).extracting(Finding::outcome)
                .containsExactly(Outcome.FLAT, Outcome.FLAT);
    }

    @Test
    void aPlateauReachedInTheFirstThirdIsFlat() {
        // Redis fills while the keys' TTL has not yet passed, then holds.
        SoakSamples samples = samples(45, "redis_used_bytes", i -> String.valueOf(Math.min(i, 12) * 20 * MIB));

        assertThat(GrowthVerdict.judge(samples, DEFAULTS)).singleElement().satisfies(finding -> {
            assertThat(finding.first()).as("the second lowest of 15: the 10th percentile").isEqualTo(20.0 * MIB);
            assertThat(finding.last()).isEqualTo(240.0 * MIB);
            assertThat(finding.outcome()).isEqualTo(Outcome.FLAT);
        });
    }

    @Test
    void onlySizesAreJudgedAndMissingValuesAreLeftOut() {
        // CPU, rates and a heap's occupancy between old-generation collections (its floor climbs
        // by design) are drawn, not judged; an unreadable sample (a restart) is an empty cell.
        SoakSamples samples = samples(30, "accepted_per_s,cpu_ms_per_purchase_purchase-api,store-service_heap_used_bytes,"
                + "store-service_heap_live_bytes",
                i -> i * 100 + "," + i + "," + (100 + 10 * i) * MIB + "," + (i % 7 == 0 ? "" : String.valueOf(300 * MIB)));

        List<Finding> findings = GrowthVerdict.judge(samples, DEFAULTS);

        assertThat(findings).singleElement().satisfies(finding -> {
            assertThat(finding.metric()).isEqualTo("store-service_heap_live_bytes");
            assertThat(finding.outcome()).isEqualTo(Outcome.FLAT);
        });
    }

    @Test
    void aRunTooShortToJudgeAnySizeFailsRatherThanPasses() {
        SoakSamples samples = samples(7, "redis_used_bytes", i -> "1048576");

        List<Finding> findings = GrowthVerdict.judge(samples, DEFAULTS);

        assertThat(findings).singleElement().extracting(Finding::outcome).isEqualTo(Outcome.TOO_FEW_SAMPLES);
        assertThat(GrowthVerdict.passed(findings)).isFalse();
        assertThat(GrowthVerdict.format(findings, DEFAULTS)).contains("| too few samples |")
                .contains("growth: FAILED: no size had 3 samples in each of the last two thirds");
    }

    @Test
    void aSizeMeasuredOnlyAtTheEndIsNotJudgedWhileTheOthersAre() {
        // A heap's live size is known only after an old-generation collection: here, the last 4 samples.
        SoakSamples samples = samples(30, "store-service_heap_live_bytes,redis_used_bytes",
                i -> (i < 26 ? "" : String.valueOf(40 * MIB)) + "," + 8 * MIB);

        List<Finding> findings = GrowthVerdict.judge(samples, DEFAULTS);

        assertThat(findings).extracting(Finding::outcome).containsExactly(Outcome.TOO_FEW_SAMPLES, Outcome.FLAT);
        assertThat(GrowthVerdict.passed(findings)).isTrue();
        assertThat(GrowthVerdict.format(findings, DEFAULTS)).contains("growth: nothing grew without bound (1 sizes")
                .contains("not judged (fewer than 3 samples in a third): store-service_heap_live_bytes");
    }

    @Test
    void noSizeAtAllFails() {
        List<Finding> findings = GrowthVerdict.judge(samples(30, "accepted_per_s", i -> "5"), DEFAULTS);

        assertThat(GrowthVerdict.passed(findings)).isFalse();
        assertThat(GrowthVerdict.format(findings, DEFAULTS)).contains("growth: FAILED: no size was sampled");
    }

    @Test
    void theLowPointIsTheTenthPercentile() {
        assertThat(GrowthVerdict.low(new double[] { 9, 1, 8, 2, 7, 3, 6, 4, 5, 10 })).isEqualTo(1);
        assertThat(GrowthVerdict.low(new double[] { 50, 40, 30, 20, 10, 60, 70, 80, 90, 100, 110, 120 })).isEqualTo(20);
        assertThat(GrowthVerdict.low(new double[0])).isNaN();
    }

    @Test
    void negativeThresholdsAreRefused() {
        assertThatThrownBy(() -> new Thresholds(-0.1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    /** n samples 15 s apart; row(i) gives the cells after t_s and fault. */
    static SoakSamples samples(int n, String columns, IntFunction<String> row) {
        List<String> lines = new ArrayList<>();
        lines.add("t_s,fault," + columns);
        for (int i = 0; i < n; i++) {
            lines.add(i * 15 + "," + (i == n / 2 ? "broker-restart" : "") + "," + row.apply(i));
        }
        return SoakSamples.parse(lines);
    }
}
