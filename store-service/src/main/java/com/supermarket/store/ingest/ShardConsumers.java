package com.supermarket.store.ingest;

import com.supermarket.contract.BrokerTopology;
import com.supermarket.contract.ManagementClient;
import com.supermarket.contract.Topology;
import com.supermarket.store.broker.BrokerReady;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Consumes every shard queue of {@link Topology#STORE_EXCHANGE} by its explicit name. Consumers
 * on the exchange-named pseudo-queue would be placed by the sharding plugin, which can pile
 * concurrent registrations onto one shard and leave others undrained; so the shard queues are
 * listed over the management API at start and every {@code rediscoverInterval}, and each new one
 * gets {@code consumersPerShard} consumers. Shards that disappear are left to the container,
 * which stops consuming a deleted queue.
 *
 * <p>Thread-safe: discovery runs on its own single thread; the container is thread-safe.
 */
@Component
class ShardConsumers implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ShardConsumers.class);

    private final ManagementClient management;
    private final String vhost;
    private final IngestProperties properties;
    private final DirectMessageListenerContainer container;
    private ScheduledExecutorService discovery;

    ShardConsumers(ConnectionFactory connectionFactory, ManagementClient management, BrokerReady broker,
                   IngestProperties properties, PurchaseListener listener, StoreCounts counts,
                   MeterRegistry registry) {
        int unacknowledgedPerShard = properties.prefetch() * properties.consumersPerShard();
        if (counts.dedupWindowPerStore() < unacknowledgedPerShard) {
            // A store lives on one shard; all of that shard's unacknowledged messages may be
            // redelivered after a connection loss, so the window must remember at least as many.
            throw new IllegalStateException("store.counts.dedup-window-per-store (" + counts.dedupWindowPerStore()
                    + ") must be at least store.ingest.prefetch x store.ingest.consumers-per-shard ("
                    + unacknowledgedPerShard + "), or redeliveries could be counted twice");
        }
        this.management = management;
        this.vhost = broker.vhost();
        this.properties = properties;
        this.container = new DirectMessageListenerContainer(connectionFactory);
        container.setConsumersPerQueue(properties.consumersPerShard());
        container.setPrefetchCount(properties.prefetch());
        container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        container.setDefaultRequeueRejected(false);
        container.setMissingQueuesFatal(false);
        container.setMessageListener(listener);
        // Consumers lost with a connection are restarted by the container's monitor; 5 s rather
        // than the default 30 s keeps a broker blip from stalling the counts for long.
        container.setMonitorInterval(5_000);
        container.setBeanName("storeShardConsumers");
        container.afterPropertiesSet();
        Gauge.builder("store.shards.consumed", this, consumers -> consumers.consumedShards().size())
                .description("Shard queues of storeX this instance consumes").register(registry);
    }

    /** Lists the shard queues and starts consuming the ones not consumed yet. */
    void discover() {
        try {
            List<String> shards = BrokerTopology.shardQueues(management, vhost, Topology.STORE_EXCHANGE);
            Set<String> consumed = Set.copyOf(consumedShards());
            List<String> added = new ArrayList<>();
            for (String shard : shards) {
                if (!consumed.contains(shard)) {
                    added.add(shard);
                }
            }
            if (!added.isEmpty()) {
                container.addQueueNames(added.toArray(String[]::new));
                log.info("Consuming shard queues {} with {} consumer(s) each, prefetch {}",
                        added, properties.consumersPerShard(), properties.prefetch());
            }
        } catch (RuntimeException e) {
            // The management API being briefly unreachable must not stop consumption of the
            // shards already known; the next round tries again.
            log.warn("Shard discovery failed, retrying in {}: {}", properties.rediscoverInterval(), e.toString());
        }
    }

    /** The shard queues consumers have been registered for. */
    List<String> consumedShards() {
        return List.of(container.getQueueNames());
    }

    boolean isConsuming() {
        return container.isRunning() && !consumedShards().isEmpty();
    }

    @Override
    public synchronized void start() {
        container.start();
        discovery = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "shard-discovery");
            thread.setDaemon(true);
            return thread;
        });
        discovery.scheduleWithFixedDelay(this::discover, 0, properties.rediscoverInterval().toMillis(),
                TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void stop() {
        if (discovery != null) {
            discovery.shutdownNow();
            discovery = null;
        }
        container.stop();
    }

    @Override
    public synchronized boolean isRunning() {
        return discovery != null;
    }
}
