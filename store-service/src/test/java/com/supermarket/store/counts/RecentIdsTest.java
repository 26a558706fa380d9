package com.supermarket.store.counts;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RecentIdsTest {

    @Test
    void remembersExactlyTheLastCapacityIdsAndTellsWhenTheForgottenOneWasRecordedLikeAnOracle() {
        Random random = new Random(11);
        for (int capacity : new int[] {1, 2, 3, 8, 100}) {
            RecentIds recent = new RecentIds(capacity);
            Deque<UUID> oracleOrder = new ArrayDeque<>();
            Set<UUID> oracle = new HashSet<>();
            Map<UUID, Integer> recordedAt = new HashMap<>();
            List<UUID> seen = new ArrayList<>();
            for (int step = 0; step < 20_000; step++) {
                // Half the time repeat a recent-ish id, so both outcomes are exercised.
                UUID id = !seen.isEmpty() && random.nextBoolean()
                        ? seen.get(Math.max(0, seen.size() - 1 - random.nextInt(capacity * 2)))
                        : new UUID(random.nextLong(), random.nextLong());
                seen.add(id);

                boolean expectedNew = !oracle.contains(id);
                int expectedForgottenAt = RecentIds.NOTHING_FORGOTTEN;
                if (expectedNew) {
                    oracleOrder.addLast(id);
                    oracle.add(id);
                    recordedAt.put(id, step);
                    if (oracleOrder.size() > capacity) {
                        UUID forgotten = oracleOrder.removeFirst();
                        oracle.remove(forgotten);
                        expectedForgottenAt = recordedAt.get(forgotten);
                    }
                }

                assertThat(recent.add(id, step)).as("capacity %d step %d", capacity, step).isEqualTo(expectedNew);
                assertThat(recent.forgottenAt()).as("capacity %d step %d", capacity, step).isEqualTo(expectedForgottenAt);
                assertThat(recent.size()).isEqualTo(oracle.size());
            }
            assertThat(recent.oldestFirst()).containsExactlyElementsOf(oracleOrder);
            oracle.forEach(id -> assertThat(recent.contains(id)).isTrue());
        }
    }
}
