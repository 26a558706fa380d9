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

    @Test
    void listsTheShardQueuesOfEveryStoreCopyGroupInBothTopologyModes() {
        String queues = """
                [{"name":"sharding: purchaseX - sm1@localhost - 0","message_stats":{"publish":100}},
                 {"name":"sharding: purchaseX - sm2@localhost - 1","message_stats":{"publish":120}},
                 {"name":"sharding: storeX - sm1@localhost - 0","message_stats":{"publish":50}},
                 {"name":"sharding: storeX - sm2@localhost - 1","message_stats":{"publish":60}},
                 {"name":"sharding: storeX.c1 - sm1@localhost - 0","message_stats":{"publish":55}},
                 {"name":"sharding: storeX.c1 - sm2@localhost - 1"},
                 {"name":"storeX.c2.shard.0","message_stats":{"publish":30}},
                 {"name":"storeX.c2.shard.1","message_stats":{"publish":45}},
                 {"name":"store.queries.p0","message_stats":{"publish":9}},
                 {"name":"purchases.parking","message_stats":{"publish":1}}]
                """;

        assertThat(ShardBalance.table(Map.of("sharding: storeX - sm1@localhost - 0", 10L), ManagementJson.shardPublished(queues)))
                .containsExactly(
                        "purchaseX: 2 shard queues, messages per queue min 100, max 120, max/min 1.20; every queue received messages",
                        "        100  sharding: purchaseX - sm1@localhost - 0",
                        "        120  sharding: purchaseX - sm2@localhost - 1",
                        "storeX: 2 shard queues, messages per queue min 40, max 60, max/min 1.50; every queue received messages",
                        "         40  sharding: storeX - sm1@localhost - 0",
                        "         60  sharding: storeX - sm2@localhost - 1",
                        "storeX.c1: 2 shard queues, messages per queue min 0, max 55, max/min inf; NOTHING reached 1: "
                                + "sharding: storeX.c1 - sm2@localhost - 1",
                        "         55  sharding: storeX.c1 - sm1@localhost - 0",
                        "          0  sharding: storeX.c1 - sm2@localhost - 1",
                        "storeX.c2: 2 shard queues, messages per queue min 30, max 45, max/min 1.50; every queue received messages",
                        "         30  storeX.c2.shard.0",
                        "         45  storeX.c2.shard.1");
    }
}
