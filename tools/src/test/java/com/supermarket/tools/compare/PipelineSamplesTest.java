package com.supermarket.tools.compare;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PipelineSamplesTest {

    private static final String CSV = """
            epoch_ms,stored,counted,api_messages,purchase-api_ticks,broker_ticks
            1000,10,10,5,100,50
            2000,60,70,15,150,80
            3000,110,110,25,200,,
            4000,110,110,25,210,90
            4500,11""";

    @Test
    void readsTheValueAtOrJustBeforeATimeAndDropsACutRow() {
        PipelineSamples samples = PipelineSamples.parse(CSV);
        assertThat(samples.processes()).containsExactly("purchase-api", "broker");
        assertThat(samples.at("stored", 1999)).hasValue(10);
        assertThat(samples.at("stored", 2000)).hasValue(60);
        assertThat(samples.at("stored", 999)).isEmpty();
        assertThat(samples.at("stored", 9999)).hasValue(110);
    }

    @Test
    void aBlankCellIsNoValue() {
        assertThat(PipelineSamples.parse(CSV.replace("200,,", "200,")).at("broker_ticks", 3500)).isEmpty();
    }

    @Test
    void theDrainEndsWhenBothStoredAndCountedHoldEveryPurchase() {
        PipelineSamples samples = PipelineSamples.parse(CSV.replace("200,,", "200,"));
        // From 10/10 at the start, 100 purchases: stored reaches 110 at 3000, counted at 3000 too.
        assertThat(samples.drainedAt(1000, 1500, 100)).hasValue(3000);
        // Counted reached 60 more at 2000, stored not yet.
        assertThat(samples.drainedAt(1000, 1500, 55)).hasValue(3000);
        assertThat(samples.drainedAt(1000, 1500, 50)).hasValue(2000);
        // Not before the run's end.
        assertThat(samples.drainedAt(1000, 3500, 50)).hasValue(4000);
        assertThat(samples.drainedAt(1000, 1500, 101)).isEmpty();
    }

    @Test
    void theBacklogIsAcceptedLessStoredAtItsWorst() {
        PipelineSamples samples = PipelineSamples.parse(CSV.replace("200,,", "200,"));
        // 80 accepted by 2000 against 50 stored: 30; 100 by 3000 against 100 stored: 0.
        assertThat(samples.backlogPeak(1000, 4000, t -> t < 2000 ? 0 : t < 3000 ? 80 : 100)).hasValue(30);
    }

    @Test
    void aShortLivedProcessMatchingThePatternIsNotCountedAtAnEnd() {
        // A command-line tool's VM (500 ticks) lives from 2,250 to 2,600 ms: the sum bumps, then drops back.
        PipelineSamples samples = PipelineSamples.parse("""
                epoch_ms,stored,counted,api_messages,broker_ticks
                1000,0,0,0,100
                1250,0,0,0,101
                1500,0,0,0,102
                1750,0,0,0,103
                2000,0,0,0,104
                2250,0,0,0,605
                2500,0,0,0,606
                2750,0,0,0,107
                """);

        assertThat(samples.ticksAt("broker", 2250)).hasValue(107 + 0.0);
        assertThat(samples.ticksAt("broker", 2000)).hasValue(104 + 0.0);
        assertThat(samples.ticksAt("broker", 1000)).hasValue(100 + 0.0);
        assertThat(samples.at("broker_ticks", 2250)).as("the tool's VM counted in").hasValue(605 + 0.0);
    }
}
