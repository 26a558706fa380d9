package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.TreeSet;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class CheckGetsCommandTest {

    @Test
    void anItemSampleReachesFromTheFirstIdToTheLast() {
        TreeSet<Integer> sold = new TreeSet<>(IntStream.rangeClosed(1, 1000).map(i -> i * 7).boxed().toList());

        TreeSet<Integer> sample = CheckGetsCommand.spread(sold, 10);

        assertThat(sample).hasSize(10).allMatch(sold::contains);
        assertThat(sample.first()).isEqualTo(7);
        assertThat(sample.last()).isGreaterThan(7 * 900);
    }

    @Test
    void noSampleOrOneAsLargeAsTheItemsSoldAsksThemAll() {
        TreeSet<Integer> sold = new TreeSet<>(IntStream.rangeClosed(1, 50).boxed().toList());

        assertThat(CheckGetsCommand.spread(sold, 0)).isEqualTo(sold);
        assertThat(CheckGetsCommand.spread(sold, 50)).isEqualTo(sold);
        assertThat(CheckGetsCommand.spread(sold, 3)).containsExactly(1, 18, 35);
    }
}
