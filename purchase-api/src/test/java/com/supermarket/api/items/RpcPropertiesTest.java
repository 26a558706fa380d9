package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RpcPropertiesTest {

    @Test
    void aRequestMustExpireBeforeTheClientStopsWaiting() {
        assertThatThrownBy(() -> new RpcProperties(Duration.ofSeconds(3), Duration.ofSeconds(3)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shorter than");
        assertThatThrownBy(() -> new RpcProperties(Duration.ofSeconds(3), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        new RpcProperties(Duration.ofSeconds(3), Duration.ofSeconds(2));
    }
}
