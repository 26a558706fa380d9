package com.supermarket.store.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.broker.BrokerSettings;
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

        assertThat(configuration.storePartition(broker(null, 0, 4), new PartitionProperties(3, null)))
                .isEqualTo(new StorePartition(3, 4));
        assertThat(configuration.storePartition(broker(null, 0, 1), new PartitionProperties(null, null)))
                .isEqualTo(new StorePartition(0, 1));
        assertThatThrownBy(() -> configuration.storePartition(broker(null, 0, 2), new PartitionProperties(2, null)))
                .hasMessageContaining("0..1 of 2");
    }

    @Test
    void replicatedShardsThePartitionsDoNotDivideRefuseTheStart() {
        assertThatThrownBy(() -> new PartitionConfiguration().storePartition(
                broker(BrokerSettings.TopologyMode.REPLICATED, 6, 4), new PartitionProperties(0, null)))
                .hasMessageContaining("6 storeX shard queue(s) cannot be split over 4");
    }

    @Test
    void theCopyIsTheSettingOrZeroAndMustBeOneOfTheCopies() {
        PartitionConfiguration configuration = new PartitionConfiguration();
        BrokerSettings twoCopies = new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1),
                null, 0, null, 2, 2);
        StorePartition partition = new StorePartition(1, 2);

        assertThat(configuration.storeCopy(twoCopies, new PartitionProperties(1, 1), partition))
                .isEqualTo(new StoreCopy(1, 2)).extracting(StoreCopy::exchange).isEqualTo("storeX.c1");
        assertThat(configuration.storeCopy(twoCopies, new PartitionProperties(1, null), partition).exchange())
                .isEqualTo("storeX");
        assertThatThrownBy(() -> configuration.storeCopy(twoCopies, new PartitionProperties(1, 2), partition))
                .hasMessageContaining("0..1 of 2 cop(ies)");
    }
}
