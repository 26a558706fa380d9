package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

import com.supermarket.contract.Topology;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mockito.ArgumentCaptor;

/**
 * The shard queues' policy the services apply ({@link BrokerTopology#applyPolicies}): it matches
 * every shard queue of every sharded exchange in both modes and no other queue, and bounds them
 * with {@code reject-publish}.
 */
class ShardQueuesPolicyTest {

    private static final int COPIES = 2;

    private static BrokerSettings settings(BrokerSettings.TopologyMode mode) {
        return new BrokerSettings(URI.create("http://127.0.0.1:1"), 2, true, null, Duration.ofSeconds(1), mode, 3, null, 1,
                COPIES);
    }

    /** The pattern and definition of the shard queues' policy PUT for {@code settings}. */
    private static Map.Entry<Pattern, Map<String, Object>> applied(BrokerSettings settings) {
        ManagementClient management = mock(ManagementClient.class);
        BrokerTopology.applyPolicies(management, "v", settings);
        ArgumentCaptor<String> pattern = ArgumentCaptor.forClass(String.class);
        @SuppressWarnings("unchecked")
        ArgumentCaptor<Map<String, Object>> definition = ArgumentCaptor.forClass(Map.class);
        verify(management).putPolicy(eq("v"), eq(Topology.SHARD_QUEUES_POLICY), pattern.capture(), eq("queues"), eq(10),
                definition.capture());
        return Map.entry(Pattern.compile(pattern.getValue()), definition.getValue());
    }

    @ParameterizedTest
    @EnumSource(BrokerSettings.TopologyMode.class)
    void matchesEveryShardQueueOfEveryShardedExchangeAndNoOtherQueue(BrokerSettings.TopologyMode mode) {
        BrokerSettings settings = settings(mode);
        Pattern pattern = applied(settings).getKey();

        for (String exchange : settings.shardedExchanges()) {
            List<String> shards = mode == BrokerSettings.TopologyMode.REPLICATED
                    ? Topology.replicatedShards(exchange, settings.replicatedShards())
                    : List.of(Topology.shardQueuePrefix(exchange) + "rabbit@node-1 - 0",
                            Topology.shardQueuePrefix(exchange) + "rabbit@node-2.example - 11");
            assertThat(shards).as("shard queues of %s", exchange).allSatisfy(q -> assertThat(pattern.matcher(q).find()).isTrue());
        }
        assertThat(List.of(Topology.PARKING_QUEUE, Topology.STORE_RPC_QUEUE, Topology.storeQueryQueue(1, 2),
                Topology.PURCHASE_EXCHANGE, "purchaseXshard.0", "storeX.c9.shard.0", "other.purchaseX.shard.0",
                "sharding: other - rabbit@node-1 - 0", "sharding: storeX.c9 - rabbit@node-1 - 0")).as("no other queue")
                .allSatisfy(q -> assertThat(pattern.matcher(q).find()).as(q).isFalse());
    }

    @ParameterizedTest
    @EnumSource(BrokerSettings.TopologyMode.class)
    void boundsTheShardQueuesWithRejectPublishAndDeadLettersWhatTheirConsumersReject(BrokerSettings.TopologyMode mode) {
        assertThat(applied(settings(mode)).getValue()).isEqualTo(Map.of(
                "dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE,
                "max-length", BrokerTopology.DEFAULT_SHARD_QUEUE_MAX_LENGTH,
                "max-length-bytes", BrokerTopology.DEFAULT_SHARD_QUEUE_MAX_LENGTH_BYTES,
                "overflow", "reject-publish"));
        assertThat(applied(settings(mode).withShardQueueBound(0, 1024)).getValue())
                .isEqualTo(Map.of("dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE, "max-length-bytes", 1024L,
                        "overflow", "reject-publish"));
        assertThat(applied(settings(mode).withShardQueueBound(0, 0)).getValue()).as("no bound: the queues grow")
                .isEqualTo(Map.of("dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE));
    }

    @ParameterizedTest
    @EnumSource(BrokerSettings.TopologyMode.class)
    void setsTheModesOtherPoliciesToo(BrokerSettings.TopologyMode mode) {
        ManagementClient management = mock(ManagementClient.class);
        BrokerTopology.applyPolicies(management, "v", settings(mode));

        if (mode == BrokerSettings.TopologyMode.REPLICATED) {
            verify(management).putPolicy(eq("v"), eq(Topology.PARKING_POLICY), anyString(), eq("queues"), anyInt(),
                    eq(Map.of("delivery-limit", BrokerTopology.PARKING_DELIVERY_LIMIT)));
        } else {
            for (String exchange : settings(mode).shardedExchanges()) {
                verify(management).putPolicy(eq("v"), eq(Topology.shardingPolicyName(exchange)), anyString(), eq("exchanges"),
                        anyInt(), anyMap());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(BrokerSettings.TopologyMode.class)
    void aNegativeBoundIsRefused(BrokerSettings.TopologyMode mode) {
        assertThatThrownBy(() -> settings(mode).withShardQueueBound(-1, 0))
                .hasMessageContaining("nor .shard-queue-max-length and .shard-queue-max-length-bytes");
    }
}
