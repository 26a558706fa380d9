package com.supermarket.purchases.broker;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.BrokerTopology;
import com.supermarket.contract.ManagementClient;
import com.supermarket.contract.Topology;
import com.supermarket.purchases.ingest.BatchWriter;
import com.supermarket.purchases.ingest.IngestProperties;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Applies the broker topology, then consumes the shard queues of
 * {@link Topology#PURCHASE_EXCHANGE} by their explicit names, in batches with manual
 * acknowledgement. The queues are listed again periodically, so shards created later (a broker
 * node joining) are consumed too.
 *
 * <p>Why explicit names: the sharding plugin's pseudo-queue named after the exchange attaches
 * each consumer to one shard only, chosen at consume time, so with fewer consumers than shards
 * some shards would never be read; naming every shard guarantees each is read.
 *
 * <p>Thread-safety: lifecycle methods are called by Spring on one thread; discovery runs on its
 * own single thread; the container is thread-safe.
 */
@Component
class ShardConsumers implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ShardConsumers.class);

    private final ConnectionFactory connectionFactory;
    private final BrokerProperties broker;
    private final IngestProperties ingest;
    private final ChannelAwareBatchMessageListener listener;
    private final BatchWriter writer;
    private final ManagementClient management;
    private final String vhost;
    private final Set<String> consumed = new CopyOnWriteArraySet<>();
    private volatile SimpleMessageListenerContainer container;
    private ScheduledExecutorService discovery;

    ShardConsumers(ConnectionFactory connectionFactory, RabbitProperties rabbit, BrokerProperties broker,
                   IngestProperties ingest, ChannelAwareBatchMessageListener listener, BatchWriter writer) {
        this.connectionFactory = connectionFactory;
        this.broker = broker;
        this.ingest = ingest;
        this.listener = listener;
        this.writer = writer;
        this.management = new ManagementClient(broker.managementUrl(), rabbit.getUsername(), rabbit.getPassword());
        this.vhost = rabbit.getVirtualHost() == null || rabbit.getVirtualHost().isBlank() ? "/" : rabbit.getVirtualHost();
    }

    @Override
    public void start() {
        BrokerTopology topology = new BrokerTopology(broker.shardsPerNode());
        try (Connection connection = connectionFactory.createConnection();
             Channel channel = connection.createChannel(false)) {
            topology.declare(channel);
        } catch (BrokerTopology.ShardingPluginMissingException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("Cannot declare the broker topology in vhost " + vhost + ": " + e, e);
        }
        if (broker.managePolicies()) {
            topology.applyPolicies(management, vhost);
        }
        List<String> shards = awaitShardQueues();
        SimpleMessageListenerContainer created = new SimpleMessageListenerContainer(connectionFactory);
        created.setQueueNames(shards.toArray(String[]::new));
        created.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        created.setConsumerBatchEnabled(true);
        created.setBatchSize(ingest.batchSize());
        created.setReceiveTimeout(ingest.receiveTimeout().toMillis());
        created.setBatchReceiveTimeout(ingest.batchReceiveTimeout().toMillis());
        // Twice the batch: the next batch arrives while this one is being committed.
        created.setPrefetchCount(2 * ingest.batchSize());
        created.setConcurrentConsumers(ingest.concurrency());
        created.setDefaultRequeueRejected(false);
        // A shard queue can vanish with its broker node; keep consuming the others.
        created.setMissingQueuesFatal(false);
        created.setMessageListener(listener);
        created.afterPropertiesSet();
        created.start();
        consumed.addAll(shards);
        container = created;
        log.info("Consuming {} shard queue(s) of {} with {} consumer(s), batches of up to {}",
                shards.size(), Topology.PURCHASE_EXCHANGE, ingest.concurrency(), ingest.batchSize());
        discovery = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("shard-discovery").daemon().factory());
        long interval = broker.discoveryInterval().toMillis();
        discovery.scheduleWithFixedDelay(this::discoverNewShards, interval, interval, TimeUnit.MILLISECONDS);
    }

    private List<String> awaitShardQueues() {
        long deadline = System.nanoTime() + broker.shardWait().toNanos();
        while (true) {
            List<String> shards = BrokerTopology.shardQueues(management, vhost, Topology.PURCHASE_EXCHANGE);
            if (!shards.isEmpty()) {
                return shards;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("No shard queue of " + Topology.PURCHASE_EXCHANGE + " in vhost " + vhost
                        + " after " + broker.shardWait() + ": is the sharding policy applied (BROKER_MANAGE_POLICIES=true, "
                        + "or the deployment's policies)?");
            }
            try {
                Thread.sleep(Duration.ofMillis(250));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for the shard queues", e);
            }
        }
    }

    private void discoverNewShards() {
        try {
            List<String> added = new ArrayList<>(BrokerTopology.shardQueues(management, vhost, Topology.PURCHASE_EXCHANGE));
            added.removeAll(consumed);
            if (!added.isEmpty()) {
                log.info("New shard queue(s) found, consuming them too: {}", added);
                container.addQueueNames(added.toArray(String[]::new));
                consumed.addAll(added);
            }
        } catch (RuntimeException e) {
            log.warn("Shard queue discovery failed, will try again: {}", e.toString());
        }
    }

    @Override
    public void stop() {
        if (discovery != null) {
            discovery.shutdownNow();
        }
        // First release consumers that hold a batch waiting for the store, so they requeue it.
        writer.stop();
        SimpleMessageListenerContainer current = container;
        if (current != null) {
            current.stop();
            current.destroy();
        }
        container = null;
    }

    @Override
    public boolean isRunning() {
        return container != null;
    }

    /** The shard queues consumed now. */
    List<String> consumedQueues() {
        return List.copyOf(consumed);
    }
}
