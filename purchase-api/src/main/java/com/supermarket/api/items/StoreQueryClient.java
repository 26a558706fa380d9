package com.supermarket.api.items;

import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Asks store-service a {@link StoreQuery} over {@link Topology#STORE_RPC_QUEUE} and waits for
 * its reply on direct reply-to, correlated by the template.
 *
 * <p>The queries run on their own lane: their own AMQP connection and channels, never the
 * publishing pool nor the health check's, so a burst of GETs (each holding a reply channel
 * until its answer) can neither exhaust the channels purchases are published on nor queue
 * behind their frames. The request expires on the queue before the caller stops waiting.
 * Thread-safe.
 */
@Component
class StoreQueryClient implements DisposableBean {

    /** Outcome tags of {@code store.rpc.latency} besides the reply statuses. */
    enum Failure { timeout, unreachable, malformed }

    private final CachingConnectionFactory connectionFactory;
    private final RabbitTemplate template;
    private final RpcProperties properties;
    private final Map<StoreQuery.Kind, Map<StoreQueryReply.Status, Timer>> answered = new EnumMap<>(StoreQuery.Kind.class);
    private final Map<StoreQuery.Kind, Map<Failure, Timer>> failed = new EnumMap<>(StoreQuery.Kind.class);

    /**
     * @param publishing the application's connection factory; only its settings (address,
     *                   credentials, vhost, timeouts) are reused, for a connection of its own
     */
    StoreQueryClient(CachingConnectionFactory publishing, RpcProperties properties, MeterRegistry registry) {
        this.connectionFactory = new CachingConnectionFactory(publishing.getRabbitConnectionFactory());
        this.connectionFactory.setConnectionNameStrategy(factory -> "purchase-api store queries");
        this.template = new RabbitTemplate(connectionFactory);
        this.template.setReplyTimeout(properties.replyTimeout().toMillis());
        this.properties = properties;
        for (StoreQuery.Kind kind : StoreQuery.Kind.values()) {
            answered.put(kind, timers(registry, kind, StoreQueryReply.Status.class));
            failed.put(kind, timers(registry, kind, Failure.class));
        }
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
     * @return a reply with a status
     * @throws StoreQueryFailedException with 504 when no reply came in time, 503 when the broker
     *                                   cannot be reached, 502 when the reply is unreadable or
     *                                   carries no status
     */
    StoreQueryReply query(StoreQuery query) {
        MessageProperties messageProperties = new MessageProperties();
        messageProperties.setContentType(WireFormat.CONTENT_TYPE);
        messageProperties.setDeliveryMode(MessageDeliveryMode.NON_PERSISTENT);
        messageProperties.setExpiration(Long.toString(properties.requestExpiry().toMillis()));
        Message request = new Message(WireFormat.encode(query), messageProperties);
        long start = System.nanoTime();
        Message reply;
        try {
            reply = template.sendAndReceive("", Topology.STORE_RPC_QUEUE, request);
        } catch (AmqpException e) {
            record(failed.get(query.kind()).get(Failure.unreachable), start);
            throw new StoreQueryFailedException(503, "the broker is unreachable; retry later", e);
        }
        if (reply == null) {
            record(failed.get(query.kind()).get(Failure.timeout), start);
            throw new StoreQueryFailedException(504, "store-service did not answer within "
                    + properties.replyTimeout().toMillis() + " ms; retry later");
        }
        StoreQueryReply decoded;
        try {
            decoded = WireFormat.decode(reply.getBody(), StoreQueryReply.class);
        } catch (MalformedMessageException e) {
            record(failed.get(query.kind()).get(Failure.malformed), start);
            throw new StoreQueryFailedException(502, "store-service sent an unreadable reply", e);
        }
        if (decoded.status() == null) {
            record(failed.get(query.kind()).get(Failure.malformed), start);
            throw new StoreQueryFailedException(502, "store-service sent a reply without a status");
        }
        record(answered.get(query.kind()).get(decoded.status()), start);
        return decoded;
    }

    private static void record(Timer timer, long start) {
        timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }

    @Override
    public void destroy() {
        template.stop();
        connectionFactory.destroy();
    }
}
