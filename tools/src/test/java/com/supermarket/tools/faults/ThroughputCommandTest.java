package com.supermarket.tools.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ThroughputCommandTest {

    @Test
    void roundsThroughputAndItsShareOfTheBaseline() {
        assertThat(ThroughputCommand.line(1000, 3.0, 500L)).isEqualTo("333 67%");
        assertThat(ThroughputCommand.line(0, 3.0, 500L)).isEqualTo("0 0%");
        assertThat(ThroughputCommand.line(1000, 3.0, null)).isEqualTo("333 n/a");
        assertThat(ThroughputCommand.line(1000, 3.0, 0L)).as("a baseline run that accepted nothing").isEqualTo("333 n/a");
    }

    @Test
    void aRunWithoutTimeIsRefused() {
        assertThatThrownBy(() -> ThroughputCommand.line(10, 0, null)).isInstanceOf(IllegalArgumentException.class);
    }
}
