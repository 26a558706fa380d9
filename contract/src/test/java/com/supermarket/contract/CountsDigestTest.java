package com.supermarket.contract;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CountsDigestTest {

    @Test
    void eachTripleHasItsFixedFingerprint() {
        // Pinned: a change here changes what every store-service copy reports in GET /state/summary.
        assertThat(CountsDigest.triple(1, 1, 1)).isEqualTo(0xc31ba5ccb3d0e231L);
        assertThat(CountsDigest.triple(7, 101, 42)).isEqualTo(0x7a830ca1293052edL);
        assertThat(CountsDigest.triple(1024, 100000, 3)).isEqualTo(0x31d36d583e7d5a7bL);
    }

    @Test
    void theDigestIsTheWrappingSumOfItsTriplesInAnyOrderAndZeroCountsAddNothing() {
        CountsDigest one = new CountsDigest();
        one.add(1, 1, 1);
        one.add(7, 101, 42);
        one.add(9, 9, 0);
        CountsDigest other = new CountsDigest();
        other.add(7, 101, 42);
        other.add(1, 1, 1);

        assertThat(one.hex()).isEqualTo(other.hex()).isEqualTo("%016x".formatted(0xc31ba5ccb3d0e231L + 0x7a830ca1293052edL));
        assertThat(new CountsDigest().hex()).isEqualTo("0000000000000000");
    }
}
