package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Topology;
import com.supermarket.tools.proxy.TcpProxy;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The service's broker connection runs through a {@link TcpProxy} that the test cuts while
 * purchases stream in: unacknowledged purchases are redelivered after the reconnect, and the
 * counts must still be exact (nothing lost, nothing counted twice).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
class ConnectionLossIT {

    private static final TestBroker BROKER = TestBroker.create("store-connection-loss");
    private static final TcpProxy PROXY = new TcpProxy(BROKER.host(), BROKER.port());

    private static final Logger log = LoggerFactory.getLogger(ConnectionLossIT.class);

    @Autowired
    StoreCounts counts;

    @Autowired
    MeterRegistry registry;

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        BROKER.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("spring.rabbitmq.host", PROXY::host);
        registry.add("spring.rabbitmq.port", PROXY::port);
        registry.add("platform.broker.shards-per-node", () -> 2);
        registry.add("platform.broker.discovery-interval", () -> "500ms");
        ExpectedCounts.manyUnacknowledged(registry);
    }

    @TestConfiguration
    static class CloseAtShutdown {
        @Bean(destroyMethod = "close")
        TestBroker testBroker() {
            return BROKER;
        }

        @Bean(destroyMethod = "close")
        TcpProxy tcpProxy() {
            return PROXY;
        }
    }

    @Test
    void countsStayExactAcrossConnectionLosses() throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> BROKER.shardQueues(Topology.STORE_EXCHANGE).size() == 2);
        ExpectedCounts expected = new ExpectedCounts(8, 20, 9);
        double appliedWhileFrozen = 0;
        try (Connection connection = BROKER.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int round = 0; round < 4; round++) {
                expected.publish(channel, 500);
                channel.waitForConfirmsOrDie(10_000);
                // Freeze the link while the consumers are busy with this round: what they still
                // apply has its ack stuck in the proxy, so the broker redelivers it once the link
                // is cut, and it must be skipped as a duplicate.
                PROXY.freeze();
                double before = applied();
                double[] last = {-1};
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
                    double now = applied();
                    boolean drained = now == last[0];
                    last[0] = now;
                    return drained;
                });
                appliedWhileFrozen += applied() - before;
                PROXY.disconnect();
                PROXY.restore();
            }
        }

        await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> expected.assertExact(counts));
        double duplicates = registry.get("store.purchases.duplicates").counter().count();
        log.info("{} purchases were applied with their ack held back; {} redeliveries were skipped",
                appliedWhileFrozen, duplicates);
        assertThat(duplicates).isGreaterThanOrEqualTo(appliedWhileFrozen);
    }

    private double applied() {
        return registry.get("store.purchases.applied").counter().count();
    }
}
