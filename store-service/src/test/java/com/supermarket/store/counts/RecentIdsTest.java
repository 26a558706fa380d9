package com.supermarket.store.counts;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RecentIdsTest {

    @Test
    void remembersExactlyTheLastCapacityIdsLikeAnOracle() {
        Random random = new Random(11);
        for (int capacity : new int[] {1, 2, 3, 8, 100}) {
            RecentIds recent = new RecentIds(capacity);
            Deque<UUID> oracleOrder = new ArrayDeque<>();
            Set<UUID> oracle = new HashSet<>();
            List<UUID> seen = new ArrayList<>();
            for (int step = 0; step < 20_000; step++) {
                // Half the time repeat a recent-ish id, so both outcomes are exercised.
                UUID id = !seen.isEmpty() && random.nextBoolean()
                        ? seen.get(Math.max(0, seen.size() - 1 - random.nextInt(capacity * 2)))
                        : new UUID(random.nextLong(), random.nextLong());
                seen.add(id);

                boolean expectedNew = !oracle.contains(id);
                if (expectedNew) {
                    oracleOrder.addLast(id);
                    oracle.add(id);
                    if (oracleOrder.size() > capacity) {
                        oracle.remove(oracleOrder.removeFirst());
                    }
                }

                assertThat(recent.add(id)).as("capacity %d step %d", capacity, step).isEqualTo(expectedNew);
                assertThat(recent.size()).isEqualTo(oracle.size());
            }
            assertThat(recent.oldestFirst()).containsExactlyElementsOf(oracleOrder);
            oracle.forEach(id -> assertThat(recent.contains(id)).isTrue());
        }
    }
}
