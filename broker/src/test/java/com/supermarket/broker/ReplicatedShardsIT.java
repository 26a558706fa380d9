package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestCluster;
import com.supermarket.contract.Topology;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * The {@code replicated} topology on a real three-node cluster: messages are published with
 * confirms under load while the node leading most shard queues, which is also the node every
 * client is connected to, is killed and started again. Every confirmed message must reach the
 * consumers of both sharded exchanges (the shared {@link ShardConsumers} both services use), which
 * re-attach through a surviving node; none is delivered twice as new (a second delivery is a
 * redelivery, which the services deduplicate by purchase id).
 */
class ReplicatedShardsIT {

    private static final int SHARDS = 6;
    private static TestCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = TestCluster.start("replicated");
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void everyConfirmedMessageIsConsumedWhenTheNodeLeadingMostShardsDiesAndReturns() throws Exception {
        BrokerSettings settings = cluster.replicatedSettings(SHARDS);
        cluster.declareReplicatedTopology(SHARDS);
        assertThat(cluster.leadersByNode(1).values().stream().mapToInt(Integer::intValue).sum())
                .as("shard queues (both exchanges), the parking and the RPC queue, all quorum").isEqualTo(2 * SHARDS + 2);
        int victim = cluster.nodeLeadingMostQueues();
        Map<String, Integer> leaders = cluster.leadersByNode(1);

        List<Consumed> consumed = new ArrayList<>();
        List<CachingConnectionFactory> factories = new ArrayList<>();
        for (String exchange : Topology.SHARDED_EXCHANGES) {
            CachingConnectionFactory connections = cluster.connectionFactory(victim);
            factories.add(connections);
            consumed.add(new Consumed(exchange, connections, settings, cluster.vhost()));
        }
        consumed.forEach(c -> c.consumers.start());
        await().atMost(Duration.ofSeconds(30)).until(() -> consumed.stream().allMatch(c -> c.consumers.isConsuming()));

        CachingConnectionFactory publishing = cluster.connectionFactory(victim);
        publishing.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        factories.add(publishing);
        Publisher publisher = new Publisher(new RabbitTemplate(publishing));
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(Thread.ofPlatform().name("publisher-" + t).start(publisher));
        }
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> publisher.confirmed.size() >= 300);
            cluster.stopNode(victim);
            int beforeRestart = publisher.confirmed.size();
            // The surviving majority confirms again once the clients have reconnected and the
            // queues have elected new leaders.
            await().atMost(Duration.ofSeconds(60)).until(() -> publisher.confirmed.size() >= beforeRestart + 300);
            cluster.startNode(victim);
            int afterRestart = publisher.confirmed.size();
            await().atMost(Duration.ofSeconds(60)).until(() -> publisher.confirmed.size() >= afterRestart + 300);
        } finally {
            publisher.running.set(false);
            for (Thread thread : threads) {
                thread.join(Duration.ofSeconds(30));
            }
        }

        try {
            for (Consumed c : consumed) {
                await(c.exchange + " consumes every confirmed message").atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                        assertThat(c.all.keySet()).containsAll(publisher.confirmed));
                assertThat(c.firstDeliveries.values()).as(c.exchange + ": no message delivered twice as new")
                        .allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
                await(c.exchange + " consumers back after the restart").atMost(Duration.ofSeconds(30))
                        .until(c.consumers::isConsuming);
            }
            // The figures, for the reader of the test report.
            System.out.printf("leaders %s, killed sm%d: %d confirmed, %d refused or unconfirmed, redeliveries %s%n",
                    leaders, victim, publisher.confirmed.size(), publisher.failed.get(),
                    consumed.stream().map(c -> c.exchange + "=" + (c.all.values().stream().mapToInt(AtomicInteger::get).sum()
                            - c.all.size())).toList());
            assertThat(publisher.failed.get()).as("publishes refused or unconfirmed (a 503, never a 201)")
                    .isLessThan(publisher.confirmed.size());
        } finally {
            consumed.forEach(c -> c.consumers.stop());
            factories.forEach(CachingConnectionFactory::destroy);
        }
    }

    /** One exchange's shard consumers and what they received: every id's deliveries, first deliveries apart. */
    private static final class Consumed {
        final String exchange;
        final Map<String, AtomicInteger> all = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> firstDeliveries = new ConcurrentHashMap<>();
        final ShardConsumers consumers;

        Consumed(String exchange, CachingConnectionFactory connections, BrokerSettings settings, String vhost) {
            this.exchange = exchange;
            ChannelAwareMessageListener listener = (message, channel) -> {
                String id = new String(message.getBody(), StandardCharsets.UTF_8);
                all.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                if (!message.getMessageProperties().isRedelivered()) {
                    firstDeliveries.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                }
                channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
            };
            this.consumers = new ShardConsumers(exchange, connections,
                    settings.setup(new RabbitAdmin(connections), "guest", "guest", vhost, BrokerUsers.ADMINISTRATOR), settings.consumers(2, 20), listener);
        }
    }

    /** Publishes ids with a confirm each until stopped; remembers the confirmed ones. */
    private static final class Publisher implements Runnable {
        final RabbitTemplate template;
        final Set<String> confirmed = ConcurrentHashMap.newKeySet();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicInteger store = new AtomicInteger();

        Publisher(RabbitTemplate template) {
            this.template = template;
            template.setMandatory(true);
        }

        @Override
        public void run() {
            while (running.get()) {
                String id = UUID.randomUUID().toString();
                MessageProperties properties = new MessageProperties();
                Message message = new Message(id.getBytes(StandardCharsets.UTF_8), properties);
                CorrelationData correlation = new CorrelationData(id);
                try {
                    template.send(Topology.INGRESS_EXCHANGE, Integer.toString(store.incrementAndGet() % 256), message, correlation);
                    CorrelationData.Confirm confirm = correlation.getFuture().get(5, TimeUnit.SECONDS);
                    if (confirm.ack() && correlation.getReturned() == null) {
                        confirmed.add(id);
                    } else {
                        failed.incrementAndGet();
                    }
                } catch (Exception e) {
                    // Unreachable, nacked or unconfirmed in time: the API would answer 503.
                    failed.incrementAndGet();
                }
            }
        }
    }
}
