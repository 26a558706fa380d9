package com.supermarket.broker;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.AsyncConsumerStartedEvent;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.context.SmartLifecycle;

/**
 * Consumes the shard queues of one sharded exchange by their explicit names: the one way both
 * consuming services read their shards. A {@link DirectMessageListenerContainer} starts with no
 * queue; a discovery round (at start, then every {@code discoveryInterval}) prepares the broker
 * through the {@link BrokerSetup}, takes the shard queues from it (the fixed quorum queues in
 * {@code replicated} mode, those listed over the management API in {@code sharded}), keeps those
 * its {@link Selection} chooses (all of them, or a store partition's) and adds each new one with
 * {@code consumersPerShard} consumers ({@code addQueueNames} starts consumers for the new queue
 * only; the others keep consuming); a queue consumed before that the selection no longer chooses
 * (the shard count changed) is given up. Until the broker is prepared and a shard queue exists,
 * rounds repeat every {@code retryInterval}, each failure logged, and {@link #isConsuming()}
 * stays false (readiness DOWN); so does a selection that cannot choose (its reason is the
 * problem).
 *
 * <p>Why explicit names: consumers on the exchange-named pseudo-queue are placed on one shard
 * each by the plugin at consume time, which can pile them onto one shard and leave others
 * unread. Acknowledgement is manual (the listener acks after its work is durable, typically with
 * {@code multiple}); a listener exception settles that delivery alone ({@link #settlingFailures}),
 * so the next {@code multiple} ack cannot acknowledge it unprocessed. A replicated shard has a single
 * active consumer: its other consumers (of this or another instance) are standbys the broker
 * switches to when the active one's channel or node is lost, so one shard is never consumed by two
 * at once; lost consumers are restarted by the container's monitor on a new connection, which the
 * connection factory opens to the next live node of its address list.
 *
 * <p>A plain class, not a bean: the service registers it (it is a {@link SmartLifecycle}, started
 * after the context is refreshed and stopped before it closes). Thread-safe: discovery runs on
 * its own single thread; the container is thread-safe; the state is readable from any thread.
 */
public final class ShardConsumers implements SmartLifecycle {

    /**
     * Stopped after the lifecycle beans of the default phase, so that a listener's collaborator
     * holding a delivery (e.g. a writer waiting for its database) is released first, and before
     * the web server stops.
     */
    public static final int PHASE = DEFAULT_PHASE - 100;

    private static final Logger log = LoggerFactory.getLogger(ShardConsumers.class);

    private final String exchange;
    private final BrokerSetup setup;
    private final Settings settings;
    private final Selection selection;
    private final TrackingContainer container;
    private final Set<String> shards = ConcurrentHashMap.newKeySet();
    private volatile String problem = "not started";
    private volatile boolean autoStartup = true;
    private ScheduledExecutorService discovery;

    /**
     * How the shard queues are consumed.
     *
     * @param consumersPerShard consumers (each with its own channel) on each shard queue
     * @param prefetch          unacknowledged messages each consumer may hold
     * @param discoveryInterval how often the shard queues are listed again once consuming
     * @param retryInterval     how often the broker set-up and discovery are retried until then
     */
    public record Settings(int consumersPerShard, int prefetch, Duration discoveryInterval, Duration retryInterval) {

        public Settings {
            if (consumersPerShard < 1 || prefetch < 1) {
                throw new IllegalArgumentException("consumersPerShard and prefetch must be at least 1: "
                        + consumersPerShard + ", " + prefetch);
            }
            if (!isPositive(discoveryInterval) || !isPositive(retryInterval)) {
                throw new IllegalArgumentException("discoveryInterval and retryInterval must be positive: "
                        + discoveryInterval + ", " + retryInterval);
            }
        }

        /** The most messages one shard queue can have unacknowledged at this service. */
        public int unacknowledgedPerShard() {
            return consumersPerShard * prefetch;
        }

        private static boolean isPositive(Duration duration) {
            return duration != null && duration.isPositive();
        }
    }

    /**
     * Which of an exchange's shard queues an instance consumes, from all of those that exist now.
     */
    @FunctionalInterface
    public interface Selection {

        /** Every shard queue. */
        Selection ALL = shardQueues -> shardQueues;

        /**
         * @param shardQueues every shard queue of the exchange found now, sorted by name
         * @return those to consume
         * @throws IllegalStateException when none can be chosen; its message says why
         */
        List<String> select(List<String> shardQueues);
    }

    /** Consumes every shard queue of {@code exchange}; see the other constructor. */
    public ShardConsumers(String exchange, ConnectionFactory connectionFactory, BrokerSetup setup, Settings settings,
                          ChannelAwareMessageListener listener) {
        this(exchange, connectionFactory, setup, settings, Selection.ALL, listener);
    }

    /**
     * @param exchange          the sharded exchange whose shard queues to consume
     * @param connectionFactory the service's connection factory; nothing may publish on its
     *                          connection (an alarm blocks a connection that publishes, acks
     *                          included): replies and parking go on its publisher connection
     * @param setup             prepares the broker before the first discovery; its management
     *                          client lists the shard queues
     * @param settings          consumers, prefetch, intervals
     * @param selection         which of the shard queues to consume
     * @param listener          handles each delivery and acknowledges it itself (manual ack), on
     *                          the channel it is given ({@link #onDeliveringChannel})
     */
    public ShardConsumers(String exchange, ConnectionFactory connectionFactory, BrokerSetup setup, Settings settings,
                          Selection selection, ChannelAwareMessageListener listener) {
        this.exchange = exchange;
        this.setup = setup;
        this.settings = settings;
        this.selection = selection;
        this.container = new TrackingContainer(connectionFactory);
        container.setConsumersPerQueue(settings.consumersPerShard());
        container.setPrefetchCount(settings.prefetch());
        container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        container.setDefaultRequeueRejected(false);
        // A shard queue can vanish with its broker node; keep consuming the others.
        container.setMissingQueuesFatal(false);
        container.setMessageListener(onDeliveringChannel(settlingFailures(listener)));
        // Consumers lost with a connection are restarted by the container's monitor; 5 s rather
        // than the default 30 s keeps a broker blip from stalling consumption for long.
        container.setMonitorInterval(5_000);
        container.setBeanName(exchange + "-shard-consumers");
        container.afterPropertiesSet();
    }

    /** One discovery round; schedules the next. */
    private void discover() {
        Duration next = settings.retryInterval();
        try {
            if (!setup.ensure()) {
                problem = setup.problem();
                return;
            }
            List<String> found = setup.shardQueues(exchange);
            List<String> chosen;
            try {
                chosen = selection.select(found);
            } catch (IllegalStateException e) {
                problem = e.getMessage();
                log.error("Not consuming the shard queues of {} now: {}; looking again in {}", exchange, problem, next);
                return;
            }
            for (String shard : found) {
                if (!chosen.contains(shard) && shards.remove(shard)) {
                    release(shard);
                }
            }
            for (String shard : chosen) {
                if (shards.add(shard)) {
                    consume(shard);
                }
            }
            if (chosen.isEmpty()) {
                problem = "no shard queue of " + exchange + " in vhost '" + setup.vhost()
                        + "' yet: is the sharding policy applied (platform.broker.manage-policies, or the deployment's policies)?";
                log.warn("{}; looking again in {}", problem, next);
            } else if (container.live.isEmpty()) {
                problem = "shard queues of " + exchange + " found, but no consumer is running (broker connection?)";
                log.warn("{}; looking again in {}", problem, next);
            } else {
                problem = null;
                next = settings.discoveryInterval();
            }
        } catch (RuntimeException e) {
            // The management API being briefly unreachable must not stop consumption of the
            // shards already known; the next round tries again.
            problem = "shard discovery of " + exchange + " failed: " + e;
            log.warn("{}; retrying in {}", problem, next);
        } finally {
            schedule(next);
        }
    }

    private void consume(String shard) {
        try {
            container.addQueueNames(shard);
            log.info("Consuming shard queue '{}' with {} consumer(s), prefetch {}", shard, settings.consumersPerShard(),
                    settings.prefetch());
        } catch (AmqpException e) {
            // The container keeps the failed consumer and its monitor restarts it.
            log.warn("Shard queue '{}' found but its consumer did not start yet (the container retries): {}", shard,
                    e.toString());
        }
    }

    /** Stops consuming a shard queue another instance now consumes; its unacknowledged messages return to it. */
    private void release(String shard) {
        container.removeQueueNames(shard);
        log.warn("No longer consuming shard queue '{}': it is not among this instance's shard queues any more "
                + "(the shard count changed)", shard);
    }

    private synchronized void schedule(Duration delay) {
        if (discovery != null && !discovery.isShutdown()) {
            discovery.schedule(this::discover, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Whether at least one consumer is running and the last discovery round succeeded. */
    public boolean isConsuming() {
        return container.isRunning() && !container.live.isEmpty() && problem == null;
    }

    /** For a health indicator: shards found, consumers running and expected, and any problem. */
    public Map<String, Object> details() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("exchange", exchange);
        details.put("shards", new TreeSet<>(shards));
        details.put("consumers", container.live.size());
        details.put("expectedConsumers", shards.size() * settings.consumersPerShard());
        if (problem != null) {
            details.put("problem", problem);
        }
        return details;
    }

    /** The shard queues found and given consumers so far, by name; a copy. */
    public List<String> consumedShards() {
        return List.copyOf(new TreeSet<>(shards));
    }

    /** The shard queues found and given consumers so far. */
    public int shardCount() {
        return shards.size();
    }

    /** The settings this consumes with. */
    public Settings settings() {
        return settings;
    }

    @Override
    public synchronized void start() {
        if (discovery != null) {
            return;
        }
        problem = "starting";
        container.start();
        discovery = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name(exchange + "-shard-discovery").daemon().factory());
        discovery.execute(this::discover);
    }

    @Override
    public synchronized void stop() {
        if (discovery != null) {
            discovery.shutdownNow();
            discovery = null;
        }
        container.stop();
        problem = "stopped";
    }

    @Override
    public synchronized boolean isRunning() {
        return discovery != null;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /**
     * Whether the context starts this when it is refreshed (true unless set otherwise); false for
     * a service that must first load its state and calls {@link #start()} itself afterwards.
     */
    public void setAutoStartup(boolean autoStartup) {
        this.autoStartup = autoStartup;
    }

    @Override
    public boolean isAutoStartup() {
        return autoStartup;
    }

    /**
     * Hands {@code listener} the channel each delivery came on rather than the container's caching
     * proxy: after a lost connection the proxy opens a fresh channel for the next call, and an
     * ack sent there names a delivery tag that channel never gave out, so the broker closes it
     * (406). On the delivering channel a closed channel fails the ack instead, and the broker
     * redelivers the message.
     */
    public static ChannelAwareMessageListener onDeliveringChannel(ChannelAwareMessageListener listener) {
        return (message, channel) -> listener.onMessage(message,
                channel instanceof ChannelProxy proxy ? proxy.getTargetChannel() : channel);
    }

    /**
     * Settles a delivery whose {@code listener} threw, on its own channel and alone: requeued
     * ({@code basicNack}, not {@code multiple}) the first time, rejected without requeue (so the
     * shard queue's dead-letter policy parks it) when it had been delivered before (the broker's
     * redelivered flag, also set after a lost connection), so a failing message is tried at most
     * twice and never loops. In manual-ack mode the container itself leaves
     * such a delivery unacknowledged, and the listener's next {@code multiple} ack on that
     * channel would then acknowledge it although it was never handled (a lost message); its
     * error handler, for the exceptions it deems fatal, nacks with {@code multiple} instead,
     * which would reject every earlier delivery still waiting for its ack. So the exception is
     * logged here and not rethrown (an {@link Error} is, after settling). If settling fails the
     * channel is aborted: the broker then redelivers everything unacknowledged on it.
     */
    static ChannelAwareMessageListener settlingFailures(ChannelAwareMessageListener listener) {
        return (message, channel) -> {
            try {
                listener.onMessage(message, channel);
            } catch (Exception | Error e) {
                settleAlone(message.getMessageProperties(), channel, e);
                if (e instanceof Error error) {
                    throw error;
                }
            }
        };
    }

    private static void settleAlone(MessageProperties properties, Channel channel, Throwable failure)
            throws IOException {
        if (!channel.isOpen()) {
            log.info("The channel of a message from {} closed before it was settled; the broker redelivers it: {}",
                    properties.getConsumerQueue(), failure.toString());
            return;
        }
        long tag = properties.getDeliveryTag();
        boolean again = Boolean.TRUE.equals(properties.getRedelivered());
        try {
            if (again) {
                log.error("Listener failed on a redelivered message from {} (id {}); rejecting it to the dead-letter "
                        + "exchange", properties.getConsumerQueue(), properties.getMessageId(), failure);
                channel.basicReject(tag, false);
            } else {
                log.error("Listener failed on a message from {} (id {}); requeueing it for one more try",
                        properties.getConsumerQueue(), properties.getMessageId(), failure);
                channel.basicNack(tag, false, true);
            }
        } catch (IOException | RuntimeException settling) {
            log.warn("Could not settle the failed message from {} ({}); aborting its channel so the broker "
                    + "redelivers it", properties.getConsumerQueue(), settling.toString());
            channel.abort();
        }
    }

    /**
     * Keeps the set of running consumers: added when the container announces one started,
     * removed when it drops one (channel closed, queue deleted, stopping).
     */
    private static final class TrackingContainer extends DirectMessageListenerContainer {

        private final Set<Object> live = ConcurrentHashMap.newKeySet();

        TrackingContainer(ConnectionFactory connectionFactory) {
            super(connectionFactory);
            setApplicationEventPublisher(event -> {
                if (event instanceof AsyncConsumerStartedEvent started) {
                    live.add(started.getConsumer());
                }
            });
        }

        @Override
        protected void consumerRemoved(SimpleConsumer consumer) {
            live.remove(consumer);
        }
    }
}
