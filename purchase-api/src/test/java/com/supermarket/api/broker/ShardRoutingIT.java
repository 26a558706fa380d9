package com.supermarket.api.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.ModulusHashKeys;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;

/** The routing follows the shard queues the sharding plugin makes, as it adds more. */
class ShardRoutingIT {

    private final TestBroker broker = TestBroker.create("api-routing");

    @AfterEach
    void deleteVhost() {
        broker.close();
    }

    @Test
    void theBatchesGoRoundEveryShardQueueListedAndTheNewOnesOnceThePluginAddsThem() {
        broker.applyTopology(2);
        ShardRouting routing = new ShardRouting(rabbit(), broker.settings(2, Duration.ofSeconds(1)));

        routing.check();

        assertThat(routing.problem()).isNull();
        assertThat(routing.health().getDetails()).containsEntry("shardQueues", 2);
        assertThat(IntStream.range(0, 64).mapToObj(turn -> routing.routingKey(0, turn)).distinct())
                .containsExactlyInAnyOrderElementsOf(ModulusHashKeys.forQueues(2));

        broker.applyTopology(5); // the policy now asks 5 per node: the plugin adds 3 to each exchange
        routing.check();

        assertThat(routing.health().getDetails()).containsEntry("shardQueues", 5);
        assertThat(IntStream.range(0, 64).mapToObj(turn -> routing.routingKey(0, turn)).distinct())
                .containsExactlyInAnyOrderElementsOf(ModulusHashKeys.forQueues(5));
    }

    private RabbitProperties rabbit() {
        RabbitProperties rabbit = new RabbitProperties();
        rabbit.setHost(broker.host());
        rabbit.setPort(broker.port());
        rabbit.setUsername(broker.username());
        rabbit.setPassword(broker.password());
        rabbit.setVirtualHost(broker.vhost());
        return rabbit;
    }
}
