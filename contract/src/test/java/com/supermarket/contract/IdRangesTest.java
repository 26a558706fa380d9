package com.supermarket.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class IdRangesTest {

    private final IdRanges ranges = new IdRanges(8, 100);

    @Test
    void storesAndItemsAreOneToTheirMaximum() {
        assertThat(ranges.isKnownStore(1)).isTrue();
        assertThat(ranges.isKnownStore(8)).isTrue();
        assertThat(ranges.isKnownStore(0)).isFalse();
        assertThat(ranges.isKnownStore(9)).isFalse();
        assertThat(ranges.isKnownItem(100)).isTrue();
        assertThat(ranges.isKnownItem(101)).isFalse();
        assertThat(ranges.isKnownItem(Long.MAX_VALUE)).isFalse();
    }

    @Test
    void aPurchaseOutsideTheRangesSaysWhichId() {
        assertThat(ranges.outOfRange(purchase(8, 100))).isNull();
        assertThat(ranges.outOfRange(purchase(9, 1))).isEqualTo("store 9 outside 1..8");
        assertThat(ranges.outOfRange(purchase(1, 101))).isEqualTo("item 101 outside 1..100");
    }

    @Test
    void rangesArePositive() {
        assertThatThrownBy(() -> new IdRanges(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new IdRanges(1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private static Purchase purchase(int store, int item) {
        return new Purchase(UUID.randomUUID(), store, 1, LocalDate.of(2021, 1, 1), List.of(new PurchaseItem(item, 1)),
                Instant.EPOCH);
    }
}
