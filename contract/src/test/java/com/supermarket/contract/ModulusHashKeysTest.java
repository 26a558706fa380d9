package com.supermarket.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The key table's reach; that each key lands where the table says is checked on the broker (BrokerTopologyIT). */
class ModulusHashKeysTest {

    @Test
    void everyQueueCountUpToTheMaximumHasOneDistinctKeyPerQueue() {
        assertThat(ModulusHashKeys.MAX_QUEUES).as("a key for every queue of any cluster the chart makes").isGreaterThanOrEqualTo(128);
        for (int queues = 1; queues <= ModulusHashKeys.MAX_QUEUES; queues++) {
            assertThat(ModulusHashKeys.forQueues(queues)).as("keys for %d queues", queues).hasSize(queues).doesNotHaveDuplicates();
        }
    }

    @Test
    void theKeysAreTheFirstCandidatesReachingEachIndexInIndexOrder() {
        // phash2([<<"s0">>], 2^27) = 2375519 (odd), phash2([<<"s1">>], 2^27) = 67964798 (even).
        assertThat(ModulusHashKeys.forQueues(1)).containsExactly("s0");
        assertThat(ModulusHashKeys.forQueues(2)).containsExactly("s1", "s0");
    }

    @Test
    void beyondTheMaximumOnlyTheReachedQueuesGetAKey() {
        List<String> keys = ModulusHashKeys.forQueues(ModulusHashKeys.MAX_QUEUES + 1);

        assertThat(keys).hasSizeBetween(1, ModulusHashKeys.MAX_QUEUES).doesNotHaveDuplicates();
        assertThatThrownBy(() -> ModulusHashKeys.forQueues(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStoreStaysOnTheShardOfItsResidueAndEveryShardGetsStores() {
        int shards = 12;

        assertThat(Topology.routingKey(7, shards)).isEqualTo(Topology.routingKey(7 + shards, shards))
                .isEqualTo(ModulusHashKeys.forQueues(shards).get(7));
        assertThat(IntStream.rangeClosed(1, 256).mapToObj(store -> Topology.routingKey(store, shards)).distinct())
                .containsExactlyInAnyOrderElementsOf(ModulusHashKeys.forQueues(shards));
    }

    @Test
    void aPartitionsBatchesTakeItsOwnShardQueuesInTurn() {
        List<String> keys = ModulusHashKeys.forQueues(12);

        assertThat(IntStream.range(0, 7).mapToObj(turn -> Topology.routingKey(0, 2, turn, 12)))
                .containsExactly(keys.get(0), keys.get(2), keys.get(4), keys.get(6), keys.get(8), keys.get(10), keys.get(0));
        assertThat(IntStream.range(0, 6).mapToObj(turn -> Topology.routingKey(1, 2, turn, 12)))
                .containsExactly(keys.get(1), keys.get(3), keys.get(5), keys.get(7), keys.get(9), keys.get(11));
        assertThat(IntStream.range(0, 4).mapToObj(turn -> Topology.routingKey(0, 1, turn, 4)))
                .containsExactlyElementsOf(ModulusHashKeys.forQueues(4));
    }

    @Test
    void aPartitionWithoutItsShareOfShardQueuesHasNoKey() {
        assertThatThrownBy(() -> Topology.routingKey(0, 3, 0, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Topology.routingKey(2, 2, 0, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Topology.routingKey(0, 1, 0, ModulusHashKeys.MAX_QUEUES + 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
