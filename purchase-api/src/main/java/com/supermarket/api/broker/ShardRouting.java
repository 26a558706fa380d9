package com.supermarket.api.broker;

import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.ManagementClient;
import com.supermarket.contract.ModulusHashKeys;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Where a purchase is published: the routing key of its store's shard, and whether a purchase
 * published now reaches both sharded exchanges' queues at all.
 *
 * <p><b>Routing keys.</b> A batch holds the purchases of one store partition ({@link #partitionOf}),
 * and goes to one of that partition's shard queues, the next batch to the next of them
 * ({@link #routingKey}, {@link Topology#routingKey(int, int, long, int)}): every shard queue gets
 * its share, each store-service partition still sees only its own stores, and a batch is as large
 * as the load makes it whatever the shard count. The shard count N is the declared quorum shards in the
 * {@code replicated} topology mode, and in the {@code sharded} mode the shard queues listed (the
 * smaller count of the two exchanges, which differ only while the plugin adds a node's queues),
 * re-learned at every check; the consumers deduplicate per purchase id across shards, so a
 * purchase retried across a change of N is still counted once.
 *
 * <p><b>Routability.</b> The ingress is a fanout to {@code purchaseX} and {@code storeX}: a
 * message that reaches a queue behind only one of them is still routed, so the broker neither
 * returns it (mandatory) nor nacks it, and the API would answer {@code 201} for a purchase one
 * consumer never sees. AMQP cannot tell a publisher where its message went, so this lists each
 * sharded exchange's shard queues over the management API every
 * {@code platform.broker.retry-interval} and keeps why publishing is unsafe; the publisher
 * refuses with {@code 503} meanwhile and readiness (the {@code routing} check) is DOWN. What it
 * cannot see: a shard queue deleted between two checks (an operator action; the sharding plugin
 * re-creates its queues itself). While the management API cannot be reached the last verdict
 * and keys stand, so its outage does not stop purchases. In the {@code replicated} topology mode
 * there is nothing to list: the platform declares its quorum shard queues and their bindings
 * itself, so both exchanges always route.
 *
 * <p><b>Store partitions.</b> store-service's partitions each consume the shard queues of their
 * stores ({@link StorePartition}), which needs the shard count to be a multiple of
 * {@code STORE_PARTITIONS}; when it is not, purchases are refused the same way, with that reason,
 * since a shard queue's stores would belong to several partitions.
 *
 * <p>Thread-safe: one scheduler thread writes a volatile immutable state that request threads read.
 */
@Component("routing")
public class ShardRouting implements HealthIndicator, SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ShardRouting.class);

    private final ManagementClient management;
    private final String vhost;
    private final long intervalMillis;
    private final boolean replicated;
    private final int replicatedShards;
    private final int storePartitions;
    private final List<String> shardedExchanges;
    private volatile Routes routes = new Routes("the shard queues have not been listed yet", 0);
    private ScheduledExecutorService checking;

    ShardRouting(RabbitProperties rabbit, BrokerSettings settings) {
        this.replicated = settings.topologyMode() == BrokerSettings.TopologyMode.REPLICATED;
        this.replicatedShards = settings.replicatedShards();
        this.storePartitions = settings.storePartitions();
        this.shardedExchanges = settings.shardedExchanges();
        String vhost = rabbit.determineVirtualHost();
        this.vhost = vhost == null || vhost.isBlank() ? "/" : vhost;
        this.management = new ManagementClient(settings.managementUrl(), rabbit.determineUsername(), rabbit.determinePassword());
        this.intervalMillis = settings.retryInterval().toMillis();
    }

    /**
     * The verdict of the last check: why publishing is unsafe (null when it is not), and the
     * shard count (kept from the last count found while a problem stands; 0 before the first).
     */
    private record Routes(String problem, int shards) {
    }

    /** Why a purchase published now might miss a sharded exchange's queues, or null when none would. */
    public String problem() {
        return routes.problem();
    }

    /** The store partition whose batches carry {@code storeId}'s purchases. */
    public int partitionOf(int storeId) {
        return StorePartition.ownerOf(storeId, storePartitions);
    }

    /**
     * The routing key of the {@code turn}-th batch of store partition {@code partition}. Defined
     * once {@link #problem()} has been null: from then on the shard count is known and divisible.
     */
    public String routingKey(int partition, long turn) {
        return Topology.routingKey(partition, storePartitions, turn, routes.shards());
    }

    void check() {
        if (replicated) {
            // The platform declares the replicated shard queues and their bindings itself, with
            // the exchanges, on every connection: a purchase always reaches both.
            route(StorePartition.splitProblem(replicatedShards, storePartitions), replicatedShards);
            return;
        }
        Routes last = routes;
        int shards = Integer.MAX_VALUE;
        String found;
        try {
            List<String> empty = new ArrayList<>();
            for (String exchange : shardedExchanges) {
                int queues = BrokerTopology.shardQueues(management, vhost, exchange).size();
                if (queues == 0) {
                    empty.add(exchange);
                }
                shards = Math.min(shards, queues);
            }
            found = empty.isEmpty() ? StorePartition.splitProblem(shards, storePartitions) : "no shard queue behind "
                    + String.join(" and ", empty) + " (is its sharding policy set?): a purchase would not reach every consumer";
        } catch (RuntimeException e) {
            // The management API is down, not the broker: keep the last verdict rather than
            // refuse every purchase while queues that existed a moment ago almost surely still do.
            log.warn("Cannot list the shard queues, keeping the last verdict ({}): {}",
                    last.problem() == null ? "both routable over " + last.shards() + " shards" : last.problem(), e.getMessage());
            return;
        }
        if (found != null && !found.equals(last.problem())) {
            log.warn("Refusing purchases: {}", found);
        } else if (found == null && last.problem() != null) {
            log.info("Both sharded exchanges have shard queues, {} for {} store partition(s); accepting purchases", shards,
                    storePartitions);
        }
        route(found, found == null ? shards : last.shards());
    }

    private void route(String problem, int shards) {
        if (problem == null && shards > ModulusHashKeys.MAX_QUEUES) {
            problem = shards + " shard queues per sharded exchange: the routing keys reach only " + ModulusHashKeys.MAX_QUEUES;
        }
        int was = routes.shards();
        if (shards != was && shards > 0) {
            log.info("Publishing over {} shard queue(s) per sharded exchange{}", shards, was == 0 ? "" : " (was " + was + ")");
        }
        routes = new Routes(problem, problem == null ? shards : was);
    }

    @Override
    public Health health() {
        Routes now = routes;
        return now.problem() == null ? Health.up().withDetail("shardQueues", now.shards()).build()
                : Health.down().withDetail("reason", now.problem()).build();
    }

    /**
     * Checks once before the web server takes requests (see {@link #getPhase}), so the first
     * purchases are not refused for want of a first listing; then every interval. An unreachable
     * management API holds the start at most its client's timeout.
     */
    @Override
    public synchronized void start() {
        check();
        checking = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("shard-routing").daemon().factory());
        checking.scheduleWithFixedDelay(this::check, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void stop() {
        if (checking != null) {
            checking.shutdownNow();
            checking = null;
        }
    }

    /** Before the web server's start (and after its stop): {@code DEFAULT_PHASE - 2048} in Spring Boot. */
    @Override
    public int getPhase() {
        return DEFAULT_PHASE - 4096;
    }

    @Override
    public synchronized boolean isRunning() {
        return checking != null;
    }
}
