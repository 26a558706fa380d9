package com.supermarket.tools.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SoakPlanCommandTest {

    @Test
    void nineHoursOfPurchasesAndTheirGetsInTheMinutesGiven() {
        // 60 min at 100 requests/s is 360,000 requests; 10 stores over 9 hours with 0.5 GET per POST.
        assertThat(SoakPlanCommand.perHour(60, 100, 10, 0.5)).isEqualTo(2667);
        assertThat(SoakPlanCommand.perHour(0.1, 1, 50, 0)).isZero();
    }

    @Test
    void noStoresIsRefused() {
        assertThatThrownBy(() -> SoakPlanCommand.perHour(60, 100, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
