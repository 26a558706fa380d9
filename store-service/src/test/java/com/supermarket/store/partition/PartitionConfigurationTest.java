package com.supermarket.store.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.contract.BrokerSettings;
import com.supermarket.contract.StorePartition;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PartitionConfigurationTest {

    private static BrokerSettings broker(BrokerSettings.TopologyMode mode, int replicatedShards, int partitions) {
        return new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1), mode,
                replicatedShards, null, partitions);
    }

    @Test
    void aStatefulSetPodsOrdinalIsItsPartition() {
        assertThat(PartitionConfiguration.ordinal("store-service-1")).isEqualTo(1);
        assertThat(PartitionConfiguration.ordinal("supermarket-store-service-12")).isEqualTo(12);
        assertThat(PartitionConfiguration.ordinal("laptop")).isNull();
        assertThat(PartitionConfiguration.ordinal("store-service-")).isNull();
    }

    @Test
    void theSettingWinsAndOnePartitionIsAlwaysPartitionZero() {
        PartitionConfiguration configuration = new PartitionConfiguration();

        assertThat(configuration.storePartition(broker(null, 0, 4), new PartitionProperties(3)))
                .isEqualTo(new StorePartition(3, 4));
        assertThat(configuration.storePartition(broker(null, 0, 1), new PartitionProperties(null)))
                .isEqualTo(new StorePartition(0, 1));
        assertThatThrownBy(() -> configuration.storePartition(broker(null, 0, 2), new PartitionProperties(2)))
                .hasMessageContaining("0..1 of 2");
    }

    @Test
    void replicatedShardsThePartitionsDoNotDivideRefuseTheStart() {
        assertThatThrownBy(() -> new PartitionConfiguration().storePartition(
                broker(BrokerSettings.TopologyMode.REPLICATED, 6, 4), new PartitionProperties(0)))
                .hasMessageContaining("6 storeX shard queue(s) cannot be split over 4");
    }
}
