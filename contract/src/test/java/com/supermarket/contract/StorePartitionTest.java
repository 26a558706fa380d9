package com.supermarket.contract;


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class StorePartitionTest {

    @Test
    void aStoreBelongsToTheResidueOfItsIdModuloThePartitions() {
        assertThat(StorePartition.ownerOf(7, 1)).isZero();
        assertThat(StorePartition.ownerOf(7, 2)).isEqualTo(1);
        assertThat(StorePartition.ownerOf(8, 4)).isZero();
        assertThat(new StorePartition(3, 4).owns(7)).isTrue();
        assertThat(new StorePartition(3, 4).owns(8)).isFalse();
    }

    @Test
    void eachPartitionTakesEveryPthShardQueueInNameOrder() {
        List<String> shards = new ArrayList<>(Topology.replicatedShards(Topology.STORE_EXCHANGE, 12));
        Collections.shuffle(shards);

        // Byte order: .shard.0, .shard.1, .shard.10, .shard.11, .shard.2, ... so index 2 is .shard.10.
        assertThat(new StorePartition(0, 4).ownedShards(shards))
                .containsExactly("storeX.shard.0", "storeX.shard.2", "storeX.shard.6");
        assertThat(new StorePartition(2, 4).ownedShards(shards))
                .containsExactly("storeX.shard.10", "storeX.shard.4", "storeX.shard.8");
        assertThat(new StorePartition(0, 1).ownedShards(shards)).hasSize(12);
    }

    @Test
    void thePartitionsTogetherTakeEveryShardQueueOnce() {
        List<String> shards = Topology.replicatedShards(Topology.STORE_EXCHANGE, 8);
        List<String> taken = new ArrayList<>();
        for (int partition = 0; partition < 4; partition++) {
            taken.addAll(new StorePartition(partition, 4).ownedShards(shards));
        }
        assertThat(taken).containsExactlyInAnyOrderElementsOf(shards);
    }

    @Test
    void shardQueuesThatThePartitionsDoNotDivideAreRefusedWithTheReason() {
        assertThat(StorePartition.splitProblem(8, 4)).isNull();
        assertThat(StorePartition.splitProblem(0, 2)).isNull();
        assertThat(StorePartition.splitProblem(6, 4)).contains("6 storeX shard queue(s) cannot be split over 4");
        assertThatThrownBy(() -> new StorePartition(0, 4).ownedShards(Topology.replicatedShards("storeX", 6)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("multiple of the partition count");
    }

    @Test
    void aPartitionOutsideThePartitionCountIsRefused() {
        assertThatThrownBy(() -> new StorePartition(2, 2)).hasMessageContaining("0..1 of 2");
        assertThatThrownBy(() -> new StorePartition(0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void oneStorePartitionKeepsTheQueryQueueItAlwaysHad() {
        assertThat(new StorePartition(0, 1).queryQueue()).isEqualTo(Topology.STORE_RPC_QUEUE);
        assertThat(new StorePartition(1, 2).queryQueue()).isEqualTo("store.queries.p1");
    }
}
