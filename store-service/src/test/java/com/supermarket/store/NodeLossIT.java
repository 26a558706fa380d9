package com.supermarket.store;

import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.broker.testing.TestCluster;
import com.supermarket.store.counts.StoreCounts;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * store-service in the {@code replicated} mode on the real three-node cluster, connected first to
 * the node leading most shard queues, which the test kills while purchases stream in and starts
 * again later: the shard consumers re-attach through a surviving node and the counts end exact
 * (nothing lost, nothing counted twice).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
// Closed (and the cluster stopped with it) when this class ends, not at the JVM's exit, which the
// build does not wait for long enough: the next module's cluster test must find it stopped.
@DirtiesContext
class NodeLossIT {

    private static final int SHARDS = 4;
    private static final TestCluster CLUSTER = TestCluster.start("store-node-loss");
    private static final int VICTIM;

    static {
        CLUSTER.declareReplicatedTopology(SHARDS);
        VICTIM = CLUSTER.nodeLeadingMostQueues();
    }

    @Autowired
    StoreCounts counts;

    @Autowired
    ShardConsumers consumers;

    @DynamicPropertySource
    static void cluster(DynamicPropertyRegistry registry) {
        CLUSTER.springProperties(VICTIM).forEach((name, value) -> registry.add(name, () -> value));
        registry.add("platform.broker.replicated-shards", () -> SHARDS);
        registry.add("platform.broker.retry-interval", () -> "500ms");
        ExpectedCounts.manyUnacknowledged(registry);
    }

    @TestConfiguration
    static class CloseAtShutdown {
        @Bean(destroyMethod = "close")
        TestCluster testCluster() {
            return CLUSTER;
        }
    }

    @Test
    void countsStayExactWhenTheNodeTheConsumersUseDiesAndReturns() throws Exception {
        await().atMost(Duration.ofSeconds(60)).until(consumers::isConsuming);
        ExpectedCounts expected = new ExpectedCounts(8, 20, 17);
        int survivor = VICTIM % 3 + 1;
        try (Connection connection = CLUSTER.newConnection(survivor); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int round = 0; round < 4; round++) {
                expected.publish(channel, 500);
                // Confirmed: on a majority of the nodes.
                channel.waitForConfirmsOrDie(60_000);
                if (round == 0) {
                    CLUSTER.stopNode(VICTIM);
                } else if (round == 2) {
                    CLUSTER.startNode(VICTIM);
                }
            }
        }

        await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> expected.assertExact(counts));
        await("consumers back on every shard").atMost(Duration.ofSeconds(30)).until(consumers::isConsuming);
    }
}
