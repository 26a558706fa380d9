package com.supermarket.tools.rates;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RateCommandsTest {

    @Test
    void roundsThroughputAndItsShareOfTheBaseline() {
        assertThat(RateCommands.throughputLine(1000, 3.0, 500L)).isEqualTo("333 67%");
        assertThat(RateCommands.throughputLine(0, 3.0, 500L)).isEqualTo("0 0%");
        assertThat(RateCommands.throughputLine(1000, 3.0, null)).isEqualTo("333 n/a");
        assertThat(RateCommands.throughputLine(1000, 3.0, 0L)).as("a baseline run that accepted nothing").isEqualTo("333 n/a");
    }

    @Test
    void aRunWithoutTimeIsRefused() {
        assertThatThrownBy(() -> RateCommands.throughputLine(10, 0, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RateCommands.throughputLine(10, -1, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void nineHoursOfPurchasesAndTheirGetsInTheMinutesGiven() {
        // 60 min at 100 requests/s is 360,000 requests; 10 stores over 9 hours with 0.5 GET per POST.
        assertThat(RateCommands.perHour(60, 100, 10, 0.5)).isEqualTo(2667);
        assertThat(RateCommands.perHour(0.1, 1, 50, 0)).isZero();
    }

    @Test
    void noStoresIsRefused() {
        assertThatThrownBy(() -> RateCommands.perHour(60, 100, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
