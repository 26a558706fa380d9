package com.supermarket.api.broker;

import com.supermarket.contract.BrokerSettings;
import com.supermarket.contract.BrokerTopology;
import com.supermarket.contract.ManagementClient;
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
 * Whether a purchase published now reaches both sharded exchanges' queues. The ingress is a
 * fanout to {@code purchaseX} and {@code storeX}: a message that reaches a queue behind only one
 * of them is still routed, so the broker neither returns it (mandatory) nor nacks it, and the
 * API would answer {@code 201} for a purchase one consumer never sees. AMQP cannot tell a
 * publisher where its message went, so this lists each sharded exchange's shard queues over the
 * management API every {@code platform.broker.retry-interval} and keeps why publishing is
 * unsafe; the publisher refuses with {@code 503} meanwhile and readiness (the {@code routing}
 * check) is DOWN. What it cannot see: a shard queue deleted between two checks (an operator
 * action; the sharding plugin re-creates its queues itself). While the management API cannot
 * be reached the last verdict stands, so its outage does not stop purchases. In the
 * {@code replicated} topology mode there is nothing to list: the platform declares its quorum
 * shard queues and their bindings itself, so both exchanges always route.
 *
 * <p>Thread-safe: one scheduler thread writes a volatile reason that request threads read.
 */
@Component("routing")
public class ShardRouting implements HealthIndicator, SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ShardRouting.class);

    private final ManagementClient management;
    private final String vhost;
    private final long intervalMillis;
    private final boolean replicated;
    private volatile String problem = "the shard queues have not been listed yet";
    private ScheduledExecutorService checking;

    ShardRouting(RabbitProperties rabbit, BrokerSettings settings) {
        this.replicated = settings.topologyMode() == BrokerSettings.TopologyMode.REPLICATED;
        String vhost = rabbit.determineVirtualHost();
        this.vhost = vhost == null || vhost.isBlank() ? "/" : vhost;
        this.management = new ManagementClient(settings.managementUrl(), rabbit.determineUsername(), rabbit.determinePassword());
        this.intervalMillis = settings.retryInterval().toMillis();
    }

    /** Why a purchase published now might miss a sharded exchange's queues, or null when none would. */
    public String problem() {
        return problem;
    }

    void check() {
        if (replicated) {
            // The platform declares the replicated shard queues and their bindings itself, with
            // the exchanges, on every connection: a purchase always reaches both.
            problem = null;
            return;
        }
        String found;
        try {
            List<String> empty = new ArrayList<>();
            for (String exchange : Topology.SHARDED_EXCHANGES) {
                if (BrokerTopology.shardQueues(management, vhost, exchange).isEmpty()) {
                    empty.add(exchange);
                }
            }
            found = empty.isEmpty() ? null : "no shard queue behind " + String.join(" and ", empty)
                    + " (is its sharding policy set?): a purchase would not reach every consumer";
        } catch (RuntimeException e) {
            // The management API is down, not the broker: keep the last verdict rather than
            // refuse every purchase while queues that existed a moment ago almost surely still do.
            log.warn("Cannot list the shard queues, keeping the last verdict ({}): {}",
                    problem == null ? "both routable" : problem, e.getMessage());
            return;
        }
        if (found != null && !found.equals(problem)) {
            log.warn("Refusing purchases: {}", found);
        } else if (found == null && problem != null) {
            log.info("Both sharded exchanges have shard queues; accepting purchases");
        }
        problem = found;
    }

    @Override
    public Health health() {
        String reason = problem;
        return reason == null ? Health.up().build() : Health.down().withDetail("reason", reason).build();
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
