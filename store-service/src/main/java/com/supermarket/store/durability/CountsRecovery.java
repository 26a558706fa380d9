package com.supermarket.store.durability;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * Brings the counts to their durable state before anything consumes or queries them, on a thread
 * of its own once the context has started (so the web server, the health endpoints and this
 * copy's {@code /state} answers are up meanwhile), then publishes {@link CountsRecovered}, on
 * which the shard consumers and the query listener start. Until then readiness is DOWN with the
 * {@link #stage()} and the {@link #problem()}, and no query is answered from half-loaded counts.
 *
 * <p>A copy of a partition with other copies ({@code STORE_COPIES} > 1) whose state directory
 * holds no state first rebuilds it from a live copy ({@link PeerRebuild}), trying again every
 * {@code retryInterval} while no peer can give its counts; it starts from zero only when every
 * peer says it is empty too (a first install). Then, as for every instance, {@link Recovery}
 * loads the newest snapshot and replays the log. A recovery that fails (a damaged state
 * directory) leaves the service not ready with the reason; nothing is counted.
 *
 * <p>It is also the service's {@link Acknowledger}, handing each message to the write-ahead log
 * recovered (which the consumers reach only after {@link CountsRecovered}). Thread-safe: the
 * state is volatile and written by the recovery thread only.
 */
public final class CountsRecovery implements Acknowledger, SmartLifecycle, AutoCloseable {

    /** Where the recovery is. */
    public enum Stage {
        /** Not started yet. */
        STARTING,
        /** The state directory is empty and no live copy has given its counts yet. */
        AWAITING_REBUILD,
        /** Loading the snapshot and replaying the log. */
        RECOVERING,
        /** The counts are recovered; consuming and answering. */
        READY,
        /** Recovery failed; the reason is {@link #problem()}. */
        FAILED
    }

    private static final Logger log = LoggerFactory.getLogger(CountsRecovery.class);

    private final DurabilityProperties properties;
    private final StoreCounts counts;
    private final MeterRegistry registry;
    private final PeerRebuild rebuild;
    private final Duration retryInterval;
    private final ApplicationEventPublisher events;
    private volatile Acknowledger acknowledger;
    private volatile Stage stage = Stage.STARTING;
    private volatile String problem = "the counts are not recovered yet";
    private ScheduledExecutorService worker;

    /**
     * @param rebuild       how to rebuild an empty state directory from the other copies, or null
     *                      (one copy, or durability off): an empty directory starts from zero
     * @param retryInterval how often the peers are asked again
     */
    CountsRecovery(DurabilityProperties properties, StoreCounts counts, MeterRegistry registry, PeerRebuild rebuild,
                   Duration retryInterval, ApplicationEventPublisher events) {
        this.properties = properties;
        this.counts = counts;
        this.registry = registry;
        this.rebuild = rebuild;
        this.retryInterval = retryInterval;
        this.events = events;
    }

    private void attempt() {
        try {
            if (!properties.enabled()) {
                log.warn("Durability is off (store.durability.enabled=false): messages are acknowledged as soon as they "
                        + "are counted in memory, and every count is lost on restart");
                acknowledger = (channel, deliveryTag, counted) -> channel.basicAck(deliveryTag, false);
            } else {
                StateDirectory directory = new StateDirectory(properties.stateDir().toAbsolutePath());
                if (rebuild != null && !directory.hasState() && !rebuilt(directory)) {
                    return;
                }
                stage = Stage.RECOVERING;
                problem = "recovering the counts from " + directory.path();
                acknowledger = WriteAheadAcknowledger.recover(properties, counts, registry);
            }
            stage = Stage.READY;
            problem = null;
            events.publishEvent(new CountsRecovered(this));
        } catch (IOException | RuntimeException e) {
            stage = Stage.FAILED;
            problem = "recovering the counts failed: " + e.getMessage();
            log.error("Not counting and not answering: {}", problem, e);
        }
    }

    /** One round over the peers: whether recovery may go on now (else the next round is scheduled). */
    private boolean rebuilt(StateDirectory directory) throws IOException {
        stage = Stage.AWAITING_REBUILD;
        PeerRebuild.Round round = rebuild.into(directory);
        if (round.rebuilt()) {
            log.info("Rebuilt the empty state directory {} from the counts of the live copy {}; the backlog of this "
                    + "copy's shard queues follows", directory.path(), round.source());
            return true;
        }
        if (round.allEmpty()) {
            log.info("Starting from zero: the state directory {} is empty and so is every other copy ({})",
                    directory.path(), rebuild.peers());
            return true;
        }
        problem = round.problem();
        log.warn("The state directory {} is empty; asking the other copies again in {}: {}", directory.path(),
                retryInterval, problem);
        worker.schedule(this::attempt, retryInterval.toMillis(), TimeUnit.MILLISECONDS);
        return false;
    }

    /** Where the recovery is. */
    public Stage stage() {
        return stage;
    }

    /** Why the counts are not ready, or null once they are. */
    public String problem() {
        return problem;
    }

    /** Whether the counts are recovered (consumers and queries may use them). */
    public boolean isReady() {
        return stage == Stage.READY;
    }

    @Override
    public void acknowledge(Channel channel, long deliveryTag, List<Purchase> counted) throws IOException {
        acknowledger.acknowledge(channel, deliveryTag, counted);
    }

    @Override
    public synchronized void start() {
        if (worker == null) {
            worker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("counts-recovery").daemon().factory());
            worker.execute(this::attempt);
        }
    }

    @Override
    public synchronized void stop() {
        if (worker != null) {
            worker.shutdownNow();
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return worker != null && !worker.isShutdown();
    }

    /** Closes the write-ahead log (after the consumers have stopped). */
    @Override
    public void close() throws Exception {
        stop();
        if (worker != null) {
            worker.awaitTermination(1, TimeUnit.MINUTES);
        }
        if (acknowledger instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }
}
