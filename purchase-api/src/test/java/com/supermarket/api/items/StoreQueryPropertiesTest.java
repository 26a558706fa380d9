package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class StoreQueryPropertiesTest {

    private static final Duration THREE_SECONDS = Duration.ofSeconds(3);

    @Test
    void aRequestMustExpireBeforeTheClientStopsWaiting() {
        assertThatThrownBy(() -> new StoreQueryProperties(THREE_SECONDS, THREE_SECONDS, 2, 100, 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shorter than");
        assertThatThrownBy(() -> new StoreQueryProperties(THREE_SECONDS, Duration.ZERO, 2, 100, 10))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new StoreQueryProperties(THREE_SECONDS, Duration.ofSeconds(2), 2, 100, 10).lanes()).isEqualTo(2);
    }

    @Test
    void lanesBatchesAndTheQueueAreBounded() {
        for (int[] bad : new int[][] {{0, 100, 10}, {2, 0, 10}, {2, 100, 0}}) {
            assertThatThrownBy(() -> new StoreQueryProperties(THREE_SECONDS, Duration.ofSeconds(2), bad[0], bad[1], bad[2]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
        }
    }
}
