package com.supermarket.api.items;

import com.supermarket.api.Deadlines;
import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.MessageTracing;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.core.AmqpMessageReturnedException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitConnectionFactoryBean;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionFactoryBeanConfigurer;
import org.springframework.stereotype.Component;

/**
 * Asks store-service {@link StoreQuery}s on the query queues of its partitions
 * ({@link Topology#storeQueryQueue}; {@link Topology#STORE_RPC_QUEUE} when there is one) and
 * waits for the replies on direct reply-to, correlated by the template.
 *
 * <p><b>Partitions.</b> The stores are split over {@code STORE_PARTITIONS} store-service
 * partitions ({@link StorePartition}), each counting its stores only. The top items of a store
 * are asked of the partition owning the store; the top stores of an item are asked of every
 * partition at once and their lists merged ({@link TopStores}), exact because each store is
 * counted by one partition only; the chain's top items are merged from every partition's item
 * totals in up to three rounds ({@link TopItems}). A partition that does not answer in time, or whose query queue
 * does not exist (the request is published mandatory, and returned), fails the query, naming the
 * partition: an answer is whole or not given.
 *
 * <p>Queries travel in batches ({@link StoreQueries}): {@code lanes} threads each take what
 * waits (up to {@code max-batch} queries), send it as one message and wait for its one reply,
 * so the queries that arrive while the lanes await replies leave together; each partition has its
 * own waiting queries and lanes; a lone query leaves
 * at once. A message costs the broker and store-service far more than a query in it. A
 * timeout, an unreachable broker or an unreadable reply fails every query of its batch; a reply
 * answers each query by its position.
 *
 * <p>The queries run on their own lane: their own AMQP connection and channels, never the
 * publishing pool nor the health check's, so a burst of GETs can neither exhaust the channels
 * purchases are published on nor queue behind their frames. The request expires on the queue
 * before the caller stops waiting; a query is settled at most the reply timeout after its
 * arrival, queued or in flight ({@link Deadlines} fails it), and a lane drops the queries
 * already failed. Nobody blocks on a query but the lanes: the caller gets a future.
 *
 * <p>The connection, the direct reply-to container and a reply consumer are opened at startup
 * ({@link #open}, called by {@link StoreQueryOpening}), not by the first GET.
 * Thread-safe.
 */
@Component
class StoreQueryClient implements DisposableBean {

    /** The routing key of the request that opens the queries' path: no queue has this name, so the broker returns it. */
    static final String OPENING_ROUTING_KEY = "purchase-api.store-queries.opening";

    /** The span of one message of store queries, up to its reply (tracing on). */
    static final String QUERY_SPAN = "store query";

    /** Outcome tags of {@code api.store.rpc.latency} besides the reply statuses. */
    enum Failure { timeout, unreachable, malformed, overloaded, returned }

    private final CachingConnectionFactory connectionFactory;
    private final RabbitTemplate template;
    private final StoreQueryProperties properties;
    private final Deadlines deadlines;
    private final MessageTracing tracing;
    private final int partitions;
    /** The queries waiting for a lane, by partition. */
    private final List<BlockingQueue<Asked>> waiting = new ArrayList<>();
    private final List<Thread> lanes = new ArrayList<>();
    private final Map<StoreQuery.Kind, Map<StoreQueryReply.Status, Timer>> answered = new EnumMap<>(StoreQuery.Kind.class);
    private final Map<StoreQuery.Kind, Map<Failure, Timer>> failed = new EnumMap<>(StoreQuery.Kind.class);
    private final DistributionSummary batchSize;
    private volatile boolean closed;

    /**
     * A query of one partition and its answer, completed exactly once (by a lane, or by its
     * deadline); {@code trace} is its request's span (null when tracing is off).
     */
    private record Asked(StoreQuery query, int partition, long start, TraceContext trace,
                         CompletableFuture<StoreQueryReply> reply) {
    }

    /**
     * @param connections Boot's configurers, which make the queries' own connection with the
     *                    application's settings ({@link #connectionOfItsOwn})
     */
    StoreQueryClient(RabbitConnectionFactoryBeanConfigurer connections, CachingConnectionFactoryConfigurer factories,
                     StoreQueryProperties properties, BrokerSettings broker, Deadlines deadlines, MessageTracing tracing,
                     MeterRegistry registry) {
        this.connectionFactory = connectionOfItsOwn(connections, factories, "purchase-api store queries");
        // Returned when a partition's query queue does not exist, rather than dropped unseen.
        this.connectionFactory.setPublisherReturns(true);
        this.template = new RabbitTemplate(connectionFactory);
        this.template.setReplyTimeout(properties.replyTimeout().toMillis());
        this.template.setMandatory(true);
        this.properties = properties;
        this.deadlines = deadlines;
        this.tracing = tracing;
        this.partitions = broker.storePartitions();
        for (StoreQuery.Kind kind : StoreQuery.Kind.values()) {
            answered.put(kind, timers(registry, kind, StoreQueryReply.Status.class));
            failed.put(kind, timers(registry, kind, Failure.class));
        }
        this.batchSize = DistributionSummary.builder("api.store.rpc.batch.size")
                .description("Store queries per RPC message").baseUnit("queries").register(registry);
        for (int partition = 0; partition < partitions; partition++) {
            BlockingQueue<Asked> queries = new ArrayBlockingQueue<>(properties.queueCapacity());
            waiting.add(queries);
            String queue = Topology.storeQueryQueue(partition, partitions);
            for (int i = 0; i < properties.lanes(); i++) {
                String name = "store-query-lane-" + (partitions == 1 ? "" : "p" + partition + "-") + i;
                lanes.add(Thread.ofPlatform().name(name).daemon().start(() -> lane(queries, queue)));
            }
        }
    }

    /**
     * The queries' connection, made as Spring Boot makes the application's: every address of
     * {@code RABBITMQ_ADDRESSES} (a connection made from the application's underlying factory
     * would know only the first, and never fail over), the credentials, vhost and timeouts;
     * named {@code name} in the broker's connection list; neither confirmed nor returned. Not a
     * bean, which would replace Boot's own connection factory.
     */
    static CachingConnectionFactory connectionOfItsOwn(RabbitConnectionFactoryBeanConfigurer connections,
                                                       CachingConnectionFactoryConfigurer factories, String name) {
        RabbitConnectionFactoryBean connection = new RabbitConnectionFactoryBean();
        connections.configure(connection);
        CachingConnectionFactory factory;
        try {
            connection.afterPropertiesSet();
            factory = new CachingConnectionFactory(connection.getObject());
        } catch (Exception e) {
            throw new IllegalStateException("could not configure the connection '" + name + "'", e);
        }
        factories.configure(factory);
        factory.setConnectionNameStrategy(ignored -> name);
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.NONE);
        factory.setPublisherReturns(false);
        return factory;
    }

    private static <O extends Enum<O>> Map<O, Timer> timers(MeterRegistry registry, StoreQuery.Kind kind, Class<O> outcomes) {
        Map<O, Timer> timers = new EnumMap<>(outcomes);
        for (O outcome : outcomes.getEnumConstants()) {
            timers.put(outcome, Timer.builder("api.store.rpc.latency")
                    .description("Store query round trip over the broker")
                    .tags("kind", kind.name(), "outcome", outcome.name())
                    .register(registry));
        }
        return timers;
    }

    /**
     * Opens what a query needs, as a query would, with a request to a queue that does not exist:
     * the connection, the template's choice of direct reply-to, its reply container and one reply
     * consumer. The broker returns the request at once.
     *
     * @throws org.springframework.amqp.AmqpException when the broker cannot be reached
     */
    void open() {
        MessageProperties messageProperties = new MessageProperties();
        messageProperties.setDeliveryMode(MessageDeliveryMode.NON_PERSISTENT);
        try {
            template.sendAndReceive("", OPENING_ROUTING_KEY, new Message(new byte[0], messageProperties));
        } catch (AmqpMessageReturnedException expected) {
            // Returned, as intended: the path is open.
        }
    }

    /** Whether the template's direct reply-to container runs (it does from {@link #open} on). */
    boolean replyContainerRunning() {
        return template.isRunning();
    }

    /**
     * Asks {@code query} of the partition owning its store; the top stores of an item of every
     * partition, merged ({@link TopStores}); the chain's top items ({@link StoreQuery.Kind#TOP_ITEMS})
     * of every partition in up to three rounds ({@link TopItems}). The future completes exactly
     * once, on the thread that settles it (a lane, the deadline's timer, or this one when the
     * query is refused at once): with a reply that has a status, or with a
     * {@link StoreQueryFailedException} naming the partition when there are several: 504 when no
     * reply came in time, 503 when the broker cannot be reached, the partition's query queue does
     * not exist or too many queries wait, 502 when the reply is unreadable or carries no status.
     * It never outlives the reply timeout, all rounds together.
     *
     * @throws IllegalArgumentException for the kinds {@link TopItems} asks of one partition itself
     */
    CompletableFuture<StoreQueryReply> query(StoreQuery query) {
        return switch (query.kind()) {
            case TOP_ITEMS_AT_STORE -> ask(query, StorePartition.ownerOf(query.id(), partitions));
            case TOP_STORES_FOR_ITEM -> {
                List<CompletableFuture<StoreQueryReply>> replies = new ArrayList<>(partitions);
                for (int partition = 0; partition < partitions; partition++) {
                    replies.add(ask(query, partition));
                }
                yield TopStores.merged(replies, query.limit());
            }
            case TOP_ITEMS -> {
                CompletableFuture<StoreQueryReply> merged = TopItems.merged(partitions, query.limit(), this::ask);
                // Each round's queries have the whole reply timeout: the answer of several rounds does not.
                if (partitions > 1) {
                    deadlines.expire(merged, properties.replyTimeout(), () -> merged.completeExceptionally(
                            new StoreQueryFailedException(504, "the store partitions did not answer the chain's top items within "
                                    + properties.replyTimeout().toMillis() + " ms; retry later")));
                }
                yield merged;
            }
            case ITEMS_SOLD_AT_LEAST, ITEM_TOTALS ->
                    throw new IllegalArgumentException(query.kind() + " is asked of one partition by TopItems, not answered alone");
        };
    }

    /** Queues {@code query} for a lane of {@code partition}. */
    private CompletableFuture<StoreQueryReply> ask(StoreQuery query, int partition) {
        Asked asked = new Asked(query, partition, System.nanoTime(), tracing.current(), new CompletableFuture<>());
        deadlines.expire(asked.reply(), properties.replyTimeout(), () -> fail(asked, Failure.timeout, timeout(partition)));
        if (closed || !waiting.get(partition).offer(asked)) {
            fail(asked, Failure.overloaded, new StoreQueryFailedException(503, closed
                    ? "the API is shutting down; retry later"
                    : "too many store queries wait for " + asked(partition) + " (" + properties.queueCapacity()
                    + "); retry later"));
        }
        return asked.reply();
    }

    /** Who answers {@code partition}'s queries, for a message: store-service, or one of its partitions. */
    private String asked(int partition) {
        return partitions == 1 ? "store-service" : "store-service partition " + partition + " of " + partitions
                + " (queue " + Topology.storeQueryQueue(partition, partitions) + ")";
    }

    private StoreQueryFailedException timeout(int partition) {
        return new StoreQueryFailedException(504, asked(partition) + " did not answer within "
                + properties.replyTimeout().toMillis() + " ms; retry later");
    }

    private void lane(BlockingQueue<Asked> queries, String queue) {
        List<Asked> batch = new ArrayList<>();
        while (!closed) {
            try {
                batch.add(queries.take());
            } catch (InterruptedException e) {
                return;
            }
            queries.drainTo(batch, properties.maxBatch() - 1);
            batch.removeIf(asked -> asked.reply().isDone()); // past their deadline
            if (!batch.isEmpty()) {
                ask(batch, queue);
            }
            batch.clear();
        }
    }

    /** Sends one batch of one partition's queries to its {@code queue} and answers every query of it; never throws. */
    private void ask(List<Asked> batch, String queue) {
        List<StoreQuery> queries = new ArrayList<>(batch.size());
        for (Asked asked : batch) {
            queries.add(asked.query());
        }
        MessageProperties messageProperties = new MessageProperties();
        messageProperties.setContentType(WireFormat.CONTENT_TYPE);
        messageProperties.setType(StoreQueries.MESSAGE_TYPE);
        messageProperties.setDeliveryMode(MessageDeliveryMode.NON_PERSISTENT);
        messageProperties.setExpiration(Long.toString(properties.requestExpiry().toMillis()));
        batchSize.record(batch.size());
        int partition = batch.getFirst().partition();
        Span span = tracing.sending(QUERY_SPAN, Span.Kind.CLIENT, batch, Asked::trace, messageProperties);
        try {
            answer(batch, queue, partition, messageProperties, queries);
        } finally {
            span.end();
        }
    }

    private void answer(List<Asked> batch, String queue, int partition, MessageProperties messageProperties,
                        List<StoreQuery> queries) {
        Message reply;
        try {
            reply = template.sendAndReceive("", queue, new Message(WireFormat.encode(new StoreQueries(queries)), messageProperties));
        } catch (AmqpMessageReturnedException e) {
            failAll(batch, Failure.returned, new StoreQueryFailedException(503, asked(partition) + " cannot be asked: its "
                    + "query queue does not exist (" + e.getReplyText() + "); do purchase-api and store-service agree on "
                    + "STORE_PARTITIONS? Retry later", e));
            return;
        } catch (RuntimeException e) {
            // AmqpException mostly; anything else must not stop the lane either.
            failAll(batch, Failure.unreachable, new StoreQueryFailedException(503, "the broker is unreachable; retry later", e));
            return;
        }
        if (reply == null) {
            failAll(batch, Failure.timeout, timeout(partition));
            return;
        }
        List<StoreQueryReply> replies;
        try {
            replies = WireFormat.decode(reply.getBody(), StoreQueries.Replies.class).replies();
        } catch (MalformedMessageException e) {
            failAll(batch, Failure.malformed, new StoreQueryFailedException(502, asked(partition) + " sent an unreadable reply", e));
            return;
        }
        if (replies.size() != batch.size()) {
            failAll(batch, Failure.malformed, new StoreQueryFailedException(502, "store-service sent a reply of "
                    + replies.size() + " answers to " + batch.size() + " queries"));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            Asked asked = batch.get(i);
            StoreQueryReply answer = replies.get(i);
            if (answer.status() == null) {
                fail(asked, Failure.malformed, new StoreQueryFailedException(502, "store-service sent a reply without a status"));
            } else if (asked.reply().complete(answer)) {
                record(answered.get(asked.query().kind()).get(answer.status()), asked.start());
            }
        }
    }

    private void failAll(List<Asked> batch, Failure failure, StoreQueryFailedException exception) {
        for (Asked asked : batch) {
            fail(asked, failure, exception);
        }
    }

    /** Fails the query unless it was answered already; the failure is timed only by whoever settles it. */
    private void fail(Asked asked, Failure failure, StoreQueryFailedException exception) {
        if (asked.reply().completeExceptionally(exception)) {
            record(failed.get(asked.query().kind()).get(failure), asked.start());
        }
    }

    private static void record(Timer timer, long start) {
        timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }

    @Override
    public void destroy() throws InterruptedException {
        closed = true;
        for (Thread lane : lanes) {
            lane.interrupt();
        }
        for (Thread lane : lanes) {
            lane.join(properties.replyTimeout().toMillis());
        }
        for (BlockingQueue<Asked> queries : waiting) {
            for (Asked asked = queries.poll(); asked != null; asked = queries.poll()) {
                fail(asked, Failure.overloaded, new StoreQueryFailedException(503, "the API is shutting down; retry later"));
            }
        }
        template.stop();
        connectionFactory.destroy();
    }
}
