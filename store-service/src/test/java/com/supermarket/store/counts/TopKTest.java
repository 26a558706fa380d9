package com.supermarket.store.counts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TopKTest {

    @Test
    void keepsTheLargestMostFirstWithTiesByLowerIdWhateverTheOfferOrder() {
        Random random = new Random(7);
        for (int round = 0; round < 500; round++) {
            int n = 1 + random.nextInt(200);
            int k = 1 + random.nextInt(12);
            // Quantities from a small range, so ties are frequent; zeros must never be ranked.
            long[] quantities = IntStream.range(0, n).mapToLong(i -> random.nextInt(6)).toArray();
            List<Integer> order = new ArrayList<>(IntStream.rangeClosed(1, n).boxed().toList());
            Collections.shuffle(order, random);

            TopK top = new TopK(k);
            order.forEach(id -> top.offer(id, quantities[id - 1]));

            assertThat(top.toList()).as("round %d, n=%d, k=%d", round, n, k).isEqualTo(bruteForce(quantities, k));
        }
    }

    @Test
    void thresholdIsZeroUntilFullThenTheSmallestKept() {
        TopK top = new TopK(2);
        top.offer(1, 5);
        assertThat(top.threshold()).isZero();
        top.offer(2, 3);
        top.offer(3, 4);
        assertThat(top.threshold()).isEqualTo(4);
        assertThat(top.toList()).containsExactly(new Ranked(1, 5), new Ranked(3, 4));
    }

    @Test
    void rejectsANonPositiveSize() {
        assertThatIllegalArgumentException().isThrownBy(() -> new TopK(0));
    }

    /** Sort everything, the obvious way. */
    static List<Ranked> bruteForce(long[] quantities, int k) {
        return IntStream.range(0, quantities.length)
                .filter(i -> quantities[i] > 0)
                .mapToObj(i -> new Ranked(i + 1, quantities[i]))
                .sorted(Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id))
                .limit(k)
                .toList();
    }
}
