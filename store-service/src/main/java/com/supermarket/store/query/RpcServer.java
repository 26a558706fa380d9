package com.supermarket.store.query;

import com.supermarket.broker.MessageTracing;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.durability.CountsRecovered;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.Span;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * The RPC server on this store partition's query queue ({@link Topology#storeQueryQueue};
 * {@link Topology#STORE_RPC_QUEUE} when there is one partition): a {@link StoreQueries} request gets
 * one reply per query in one message ({@link StoreRanking#answerAll}). Each request's reply goes to its
 * {@code replyTo} (purchase-api uses direct reply-to) with the request's correlation id, which
 * the listener adapter copies. The reply is a raw JSON {@link Message}, so no converter adds
 * type headers. A request without {@code replyTo} cannot be answered: it is counted, logged and
 * dropped. With tracing on, each request is answered in a span continuing the one in its
 * headers ({@link MessageTracing#handling}). Thread-safe.
 */
@Component
class RpcServer {

    private static final Logger log = LoggerFactory.getLogger(RpcServer.class);
    private static final String LISTENER = "storeRpc";

    /** The span of answering one request (tracing on). */
    static final String ANSWER_SPAN = "store query answer";

    private final StoreRanking ranking;
    private final MessageTracing tracing;
    private final Counter unanswerable;
    private final RabbitListenerEndpointRegistry listeners;

    RpcServer(StoreRanking ranking, MessageTracing tracing, RabbitListenerEndpointRegistry listeners,
            MeterRegistry registry) {
        this.ranking = ranking;
        this.tracing = tracing;
        this.listeners = listeners;
        this.unanswerable = Counter.builder("store.queries.unanswerable")
                .description("RPC requests dropped because they carried no reply-to").register(registry);
    }

    /**
     * Starts answering once the counts are recovered: the copies of a partition share its query
     * queue, so one that is still loading or rebuilding leaves the queries to the others.
     */
    @EventListener(CountsRecovered.class)
    void answerWhenRecovered() {
        listeners.getListenerContainer(LISTENER).start();
    }

    @RabbitListener(id = LISTENER, queues = "#{@storePartition.queryQueue()}", concurrency = "${store.query.rpc-consumers}",
            autoStartup = "false")
    Message answer(Message request) {
        if (request.getMessageProperties().getReplyTo() == null) {
            unanswerable.increment();
            log.warn("Dropping RPC request {} without reply-to", request.getMessageProperties().getCorrelationId());
            return null;
        }
        MessageProperties properties = new MessageProperties();
        properties.setContentType(WireFormat.CONTENT_TYPE);
        try (MessageTracing.Handling traced = tracing.handling(ANSWER_SPAN, Span.Kind.SERVER, request.getMessageProperties(),
                List.of())) {
            byte[] reply = WireFormat.encode(ranking.answerAll(request.getMessageProperties().getType(), request.getBody()));
            log.debug("Answered a store query request {}", request.getMessageProperties().getCorrelationId());
            return new Message(reply, properties);
        }
    }
}
