package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.Topology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The claim store partitions rest on, on the broker: published as purchase-api publishes
 * ({@link Topology#routingKey} over N shard queues), the purchases of store {@code s} reach only
 * the shard queues that {@link StorePartition#ownedShards} gives partition {@code s mod P}; that
 * is, the exchange indexes its queues in the order of their names. In both topology modes, and
 * with 12 queues, where name order and number order part ({@code .shard.10} before
 * {@code .shard.2}).
 */
class StorePartitionsIT {

    private TestBroker broker;

    @BeforeEach
    void createVhost() {
        broker = TestBroker.create("partitions");
    }

    @AfterEach
    void deleteVhost() {
        broker.close();
    }

    @ParameterizedTest(name = "{0} shard queues, {1} partitions, {2}")
    @MethodSource("shardsPartitionsAndModes")
    void thePurchasesOfAPartitionsStoresReachExactlyItsShardQueues(int shards, int partitions, BrokerSettings.TopologyMode mode)
            throws Exception {
        if (mode == BrokerSettings.TopologyMode.REPLICATED) {
            broker.applyReplicatedTopology(shards);
        } else {
            broker.applyTopology(shards);
        }
        int stores = 4 * shards;
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int store = 1; store <= stores; store++) {
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(store, shards), true,
                        new AMQP.BasicProperties.Builder().deliveryMode(2).build(), Integer.toString(store).getBytes());
            }
            channel.waitForConfirmsOrDie(10_000);

            List<String> queues = mode == BrokerSettings.TopologyMode.REPLICATED
                    ? Topology.replicatedShards(Topology.STORE_EXCHANGE, shards) : broker.shardQueues(Topology.STORE_EXCHANGE);
            assertThat(queues).hasSize(shards);
            // Consumed, not fetched: a replicated shard (single active consumer) refuses basic.get.
            List<List<Integer>> received = new ArrayList<>();
            for (int partition = 0; partition < partitions; partition++) {
                List<Integer> consumed = Collections.synchronizedList(new ArrayList<>());
                received.add(consumed);
                for (String queue : new StorePartition(partition, partitions).ownedShards(queues)) {
                    channel.basicConsume(queue, true, (tag, delivery) -> consumed.add(Integer.parseInt(new String(delivery.getBody()))),
                            tag -> { });
                }
            }
            await("every store's message consumed").atMost(Duration.ofSeconds(10))
                    .until(() -> received.stream().mapToInt(List::size).sum() == stores);
            for (int partition = 0; partition < partitions; partition++) {
                int owner = partition;
                List<Integer> owned = Stream.iterate(1, store -> store + 1).limit(stores)
                        .filter(store -> StorePartition.ownerOf(store, partitions) == owner).toList();
                assertThat(received.get(partition)).as("stores received by partition %d of %d", partition, partitions)
                        .containsExactlyInAnyOrderElementsOf(owned);
            }
        }
    }

    static Stream<Arguments> shardsPartitionsAndModes() {
        List<Arguments> cases = new ArrayList<>();
        for (BrokerSettings.TopologyMode mode : BrokerSettings.TopologyMode.values()) {
            for (int[] shardsAndPartitions : new int[][] {{4, 2}, {4, 4}, {8, 2}, {8, 4}, {12, 4}}) {
                cases.add(Arguments.of(shardsAndPartitions[0], shardsAndPartitions[1], mode));
            }
        }
        return cases.stream();
    }
}
