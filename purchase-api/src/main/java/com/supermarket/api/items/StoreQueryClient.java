package com.supermarket.api.items;

import com.supermarket.api.Deadlines;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 * Asks store-service {@link StoreQuery}s over {@link Topology#STORE_RPC_QUEUE} and waits for
 * the replies on direct reply-to, correlated by the template.
 *
 * <p>Queries travel in batches ({@link StoreQueries}): {@code lanes} threads each take what
 * waits (up to {@code max-batch} queries), send it as one message and wait for its one reply,
 * so the queries that arrive while the lanes await replies leave together; a lone query leaves
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
 * Thread-safe.
 */
@Component
class StoreQueryClient implements DisposableBean {

    /** Outcome tags of {@code store.rpc.latency} besides the reply statuses. */
    enum Failure { timeout, unreachable, malformed, overloaded }

    private final CachingConnectionFactory connectionFactory;
    private final RabbitTemplate template;
    private final RpcProperties properties;
    private final Deadlines deadlines;
    private final BlockingQueue<Asked> waiting;
    private final List<Thread> lanes = new ArrayList<>();
    private final Map<StoreQuery.Kind, Map<StoreQueryReply.Status, Timer>> answered = new EnumMap<>(StoreQuery.Kind.class);
    private final Map<StoreQuery.Kind, Map<Failure, Timer>> failed = new EnumMap<>(StoreQuery.Kind.class);
    private final DistributionSummary batchSize;
    private volatile boolean closed;

    /** A query and its caller's answer, completed exactly once (by a lane, or by its deadline). */
    private record Asked(StoreQuery query, long start, CompletableFuture<StoreQueryReply> reply) {
    }

    /**
     * @param connections Boot's configurers, which make the queries' own connection with the
     *                    application's settings ({@link #connectionOfItsOwn})
     */
    StoreQueryClient(RabbitConnectionFactoryBeanConfigurer connections, CachingConnectionFactoryConfigurer factories,
                     RpcProperties properties, Deadlines deadlines, MeterRegistry registry) {
        this.connectionFactory = connectionOfItsOwn(connections, factories, "purchase-api store queries");
        this.template = new RabbitTemplate(connectionFactory);
        this.template.setReplyTimeout(properties.replyTimeout().toMillis());
        this.properties = properties;
        this.deadlines = deadlines;
        this.waiting = new ArrayBlockingQueue<>(properties.queueCapacity());
        for (StoreQuery.Kind kind : StoreQuery.Kind.values()) {
            answered.put(kind, timers(registry, kind, StoreQueryReply.Status.class));
            failed.put(kind, timers(registry, kind, Failure.class));
        }
        this.batchSize = DistributionSummary.builder("store.rpc.batch.size")
                .description("Store queries per RPC message").baseUnit("queries").register(registry);
        for (int i = 0; i < properties.lanes(); i++) {
            lanes.add(Thread.ofPlatform().name("store-query-lane-" + i).daemon().start(this::lane));
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
            timers.put(outcome, Timer.builder("store.rpc.latency")
                    .description("Store query round trip over the broker")
                    .tags("kind", kind.name(), "outcome", outcome.name())
                    .register(registry));
        }
        return timers;
    }

    /**
     * Queues {@code query} for a lane. The future completes exactly once, on the thread that
     * settles it (a lane, the deadline's timer, or this one when the query is refused at once):
     * with a reply that has a status, or with a {@link StoreQueryFailedException}: 504 when no
     * reply came in time, 503 when the broker cannot be reached or too many queries wait, 502
     * when the reply is unreadable or carries no status. It never outlives the reply timeout.
     */
    CompletableFuture<StoreQueryReply> query(StoreQuery query) {
        Asked asked = new Asked(query, System.nanoTime(), new CompletableFuture<>());
        deadlines.expire(asked.reply(), properties.replyTimeout(), () -> fail(asked, Failure.timeout, timeout()));
        if (closed || !waiting.offer(asked)) {
            fail(asked, Failure.overloaded, new StoreQueryFailedException(503, closed
                    ? "the API is shutting down; retry later"
                    : "too many store queries wait (" + properties.queueCapacity() + "); retry later"));
        }
        return asked.reply();
    }

    private StoreQueryFailedException timeout() {
        return new StoreQueryFailedException(504, "store-service did not answer within "
                + properties.replyTimeout().toMillis() + " ms; retry later");
    }

    private void lane() {
        List<Asked> batch = new ArrayList<>();
        while (!closed) {
            try {
                batch.add(waiting.take());
            } catch (InterruptedException e) {
                return;
            }
            waiting.drainTo(batch, properties.maxBatch() - 1);
            batch.removeIf(asked -> asked.reply().isDone()); // past their deadline
            if (!batch.isEmpty()) {
                ask(batch);
            }
            batch.clear();
        }
    }

    /** Sends one batch and answers every query of it; never throws. */
    private void ask(List<Asked> batch) {
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
        Message reply;
        try {
            reply = template.sendAndReceive("", Topology.STORE_RPC_QUEUE,
                    new Message(WireFormat.encode(new StoreQueries(queries)), messageProperties));
        } catch (RuntimeException e) {
            // AmqpException mostly; anything else must not stop the lane either.
            failAll(batch, Failure.unreachable, new StoreQueryFailedException(503, "the broker is unreachable; retry later", e));
            return;
        }
        if (reply == null) {
            failAll(batch, Failure.timeout, timeout());
            return;
        }
        List<StoreQueryReply> replies;
        try {
            replies = WireFormat.decode(reply.getBody(), StoreQueries.Replies.class).replies();
        } catch (MalformedMessageException e) {
            failAll(batch, Failure.malformed, new StoreQueryFailedException(502, "store-service sent an unreadable reply", e));
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
        for (Asked asked = waiting.poll(); asked != null; asked = waiting.poll()) {
            fail(asked, Failure.overloaded, new StoreQueryFailedException(503, "the API is shutting down; retry later"));
        }
        template.stop();
        connectionFactory.destroy();
    }
}
