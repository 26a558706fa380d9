package com.supermarket.tools.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

class ShardBalanceTest {

    @Test
    void readsQueueNamesWithSpaces() {
        assertThat(ShardBalance.readCounts("12 sharding: purchaseX - rabbit@h - 0\n\n3 storeX.shard.1\n"))
                .containsEntry("sharding: purchaseX - rabbit@h - 0", 12L).containsEntry("storeX.shard.1", 3L).hasSize(2);
        assertThatThrownBy(() -> ShardBalance.readCounts("12\n")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void balanceOfWhatEachQueueReceivedInBetween() {
        Map<String, Long> before = Map.of("purchaseX.shard.0", 100L, "purchaseX.shard.1", 50L);
        Map<String, Long> after = Map.of("purchaseX.shard.0", 300L, "purchaseX.shard.1", 150L, "storeX.shard.0", 9L,
                "storeX.shard.1", 0L);

        assertThat(ShardBalance.table(before, after)).containsExactly(
                "purchaseX: 2 shard queues, messages per queue min 100, max 200, max/min 2.00; every queue received messages",
                "        200  purchaseX.shard.0",
                "        100  purchaseX.shard.1",
                "storeX: 2 shard queues, messages per queue min 0, max 9, max/min inf; NOTHING reached 1: storeX.shard.1",
                "          9  storeX.shard.0",
                "          0  storeX.shard.1");
    }

    @Test
    void anExchangeWithoutShardQueuesIsSaid() {
        assertThat(ShardBalance.table(Map.of(), Map.of("purchaseX.shard.0", 1L)))
                .contains("storeX: no shard queue found");
    }
}
