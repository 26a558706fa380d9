package com.supermarket.broker;

import com.supermarket.contract.Topology;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * Prepares the broker for the platform: declares the {@link BrokerTopology} and, unless the
 * deployment provides them, applies its policies. The one runner of both, shared by every
 * service. A service does not exit while the broker is missing, unreachable or lacks the
 * sharding plugin: it calls {@link #ensure()} again at its retry interval, each failed attempt
 * is logged, and {@link #problem()} says why it is not ready.
 *
 * <p>A missing sharding plugin is retried too, not fatal: an operator can enable the plugin (or
 * the broker's definition can be fixed) without the service going through crash-loop back-off,
 * and the reason is in the log on every attempt and in the readiness details.
 *
 * <p>A service whose broker user may not declare ({@link BrokerSettings#declares()} false) only
 * checks, passively, that what it works with exists (the queues it reads and the exchanges it
 * writes to, by its {@link BrokerUsers} rights): the deployment's set-up step declares the
 * topology and the policies once, as a user that may.
 *
 * <p>Thread-safe: {@link #ensure()} is serialised; the state is readable from any thread.
 */
public final class BrokerSetup {

    private static final Logger log = LoggerFactory.getLogger(BrokerSetup.class);

    private final RabbitAdmin admin;
    private final ManagementClient management;
    private final String vhost;
    private final BrokerSettings settings;
    private final BrokerUsers user;
    private volatile boolean done;
    private volatile String problem = "the broker topology is not declared yet";
    private int attempts;

    /**
     * @param admin      declares the topology (over the service's connection factory)
     * @param management sets the policies and lists shard queues
     * @param vhost      the virtual host the service works in
     * @param settings   shards per node, whether to set the policies, retry interval
     * @param user       the rights of the service's broker user: what it checks exists when it
     *                   may not declare
     */
    public BrokerSetup(RabbitAdmin admin, ManagementClient management, String vhost, BrokerSettings settings,
                       BrokerUsers user) {
        this.admin = admin;
        this.management = management;
        this.vhost = vhost;
        this.settings = settings;
        this.user = user;
    }

    /**
     * Declares the topology and applies the policies unless that succeeded before. Never throws:
     * a failure is logged and kept in {@link #problem()}.
     *
     * @return whether the broker is prepared
     */
    public synchronized boolean ensure() {
        if (done) {
            return true;
        }
        attempts++;
        try {
            if (settings.declares()) {
                BrokerTopology.declare(admin, settings);
            } else {
                BrokerTopology.verify(admin, settings, vhost, user);
            }
            if (managesPolicies()) {
                BrokerTopology.applyPolicies(management, vhost, settings);
            }
        } catch (BrokerTopology.ShardingPluginMissingException e) {
            problem = e.getMessage();
            log.error("Broker not usable (attempt {}), retrying in {}: {}", attempts, settings.retryInterval(), problem);
            return false;
        } catch (RuntimeException e) {
            problem = "cannot prepare the broker in vhost '" + vhost + "': " + e;
            log.warn("Broker not ready (attempt {}), retrying in {}: {}", attempts, settings.retryInterval(), problem);
            return false;
        }
        log.info("Broker topology ({}) {} in vhost '{}' after {} attempt(s); {}", settings.topologyMode(),
                settings.declares() ? "declared" : "found (declared by the deployment)", vhost, attempts,
                !managesPolicies() ? "policies left to the deployment"
                        : (replicated() ? settings.replicatedShards() + " quorum queue(s) per sharded exchange"
                        : settings.shardsPerNode() + " shard(s) per node") + ", policies applied (shard queues: "
                        + BrokerTopology.shardQueuesDefinition(settings) + ")");
        problem = null;
        done = true;
        return true;
    }

    /**
     * The shard queues of {@code exchange} to consume: in {@code replicated} mode the fixed
     * names (no broker call), in {@code sharded} mode those the plugin has made so far (listed
     * over the management API), sorted by name.
     */
    public List<String> shardQueues(String exchange) {
        return replicated() ? Topology.replicatedShards(exchange, settings.replicatedShards())
                : BrokerTopology.shardQueues(management, vhost, exchange);
    }

    private boolean replicated() {
        return settings.topologyMode() == BrokerSettings.TopologyMode.REPLICATED;
    }

    /**
     * The policies ({@link BrokerTopology#applyPolicies}) are set only by a service that declares
     * (a least-privilege user has no {@code policymaker} tag).
     */
    private boolean managesPolicies() {
        return settings.managePolicies() && settings.declares();
    }

    /** Whether {@link #ensure()} has succeeded. */
    public boolean isDone() {
        return done;
    }

    /** Why the broker is not prepared yet, or null once it is. */
    public String problem() {
        return problem;
    }

    /** The virtual host this setup prepares. */
    public String vhost() {
        return vhost;
    }

    /** The shared broker settings this setup was built from. */
    public BrokerSettings settings() {
        return settings;
    }

    /** The management API client this setup uses (also for shard discovery). */
    public ManagementClient management() {
        return management;
    }
}
