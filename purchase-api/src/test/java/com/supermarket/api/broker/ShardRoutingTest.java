package com.supermarket.api.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.BrokerSettings.TopologyMode;
import com.supermarket.broker.BrokerSettings;
import com.supermarket.contract.ModulusHashKeys;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.SmartLifecycle;

class ShardRoutingTest {

    /** A management API nobody listens on: any call to it fails. */
    private static final URI NO_MANAGEMENT = URI.create("http://127.0.0.1:1");

    private static ShardRouting routing(TopologyMode mode) {
        return new ShardRouting(new RabbitProperties(),
                new BrokerSettings(NO_MANAGEMENT, 4, true, Duration.ofSeconds(10), Duration.ofSeconds(2), mode, 8, null));
    }

    @Test
    void replicatedShardsAlwaysRouteWithoutAskingTheManagementApi() {
        ShardRouting routing = routing(TopologyMode.REPLICATED);

        routing.check();

        assertThat(routing.problem()).isNull();
        assertThat(routing.health().getStatus()).isEqualTo(Status.UP);
        assertThat(routing.health().getDetails()).containsEntry("shardQueues", 8);
    }

    @Test
    void shardsTheStorePartitionsDoNotDivideAreRefusedWithTheReasonInHealth() {
        ShardRouting routing = new ShardRouting(new RabbitProperties(), new BrokerSettings(NO_MANAGEMENT, 4, true,
                Duration.ofSeconds(10), Duration.ofSeconds(2), TopologyMode.REPLICATED, 8, null, 3));

        routing.check();

        assertThat(routing.problem()).contains("8 storeX shard queue(s) cannot be split over 3 store partitions");
        assertThat(routing.health().getStatus()).isEqualTo(Status.DOWN);
        assertThat(routing.health().getDetails()).containsEntry("reason", routing.problem());
    }

    @Test
    void shardsTheStorePartitionsDivideRoute() {
        ShardRouting routing = new ShardRouting(new RabbitProperties(), new BrokerSettings(NO_MANAGEMENT, 4, true,
                Duration.ofSeconds(10), Duration.ofSeconds(2), TopologyMode.REPLICATED, 8, null, 4));

        routing.check();

        assertThat(routing.problem()).isNull();
    }

    @Test
    void eachPartitionsBatchesGoRoundItsOwnDeclaredShards() {
        ShardRouting routing = new ShardRouting(new RabbitProperties(), new BrokerSettings(NO_MANAGEMENT, 4, true,
                Duration.ofSeconds(10), Duration.ofSeconds(2), TopologyMode.REPLICATED, 8, null, 2));

        routing.check();

        assertThat(routing.partitionOf(3)).isEqualTo(1);
        assertThat(routing.partitionOf(8)).isZero();
        List<String> keys = ModulusHashKeys.forQueues(8);
        assertThat(IntStream.range(0, 4).mapToObj(turn -> routing.routingKey(1, turn)))
                .containsExactly(keys.get(1), keys.get(3), keys.get(5), keys.get(7));
        assertThat(routing.routingKey(0, 4)).isEqualTo(routing.routingKey(0, 0)).isEqualTo(keys.get(0));
    }

    @Test
    void moreShardsThanTheRoutingKeysReachAreRefused() {
        ShardRouting routing = new ShardRouting(new RabbitProperties(), new BrokerSettings(NO_MANAGEMENT, 4, true,
                Duration.ofSeconds(10), Duration.ofSeconds(2), TopologyMode.REPLICATED, ModulusHashKeys.MAX_QUEUES + 1, null));

        routing.check();

        assertThat(routing.problem()).contains("the routing keys reach only " + ModulusHashKeys.MAX_QUEUES);
    }

    @Test
    void theFirstCheckIsDoneWhenStartReturnsAndBeforeTheWebServerStarts() {
        ShardRouting routing = routing(TopologyMode.REPLICATED);

        routing.start();
        try {
            // The next scheduled check is an interval away: only start() itself can have checked.
            assertThat(routing.problem()).isNull();
        } finally {
            routing.stop();
        }
        // Spring Boot starts the servlet web server in phase DEFAULT_PHASE - 2048.
        assertThat(routing.getPhase()).isLessThan(SmartLifecycle.DEFAULT_PHASE - 2048);
    }

    @Test
    void shardedRoutingStaysRefusedUntilTheShardQueuesHaveBeenListed() {
        ShardRouting routing = routing(TopologyMode.SHARDED);

        routing.check();

        assertThat(routing.problem()).contains("not been listed yet");
        assertThat(routing.health().getStatus()).isEqualTo(Status.DOWN);
    }
}
