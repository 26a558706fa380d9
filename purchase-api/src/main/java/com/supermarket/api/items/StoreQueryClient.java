package com.supermarket.api.items;

import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;

/**
 * Asks store-service a {@link StoreQuery} over {@link Topology#STORE_RPC_QUEUE} and waits for
 * its reply on direct reply-to, correlated by the template. The request expires on the queue
 * when the caller stops waiting, so store-service never answers nobody. Thread-safe.
 */
@Component
class StoreQueryClient {

    private final RabbitTemplate template;
    private final RpcTimeout timeout;
    private final MeterRegistry registry;

    StoreQueryClient(@Qualifier("rpcTemplate") RabbitTemplate template, RpcTimeout timeout, MeterRegistry registry) {
        this.template = template;
        this.timeout = timeout;
        this.registry = registry;
    }

    /**
     * @throws StoreQueryFailedException with 504 when no reply came in time, 503 when the broker
     *                                   cannot be reached, 502 when the reply is unreadable
     */
    StoreQueryReply query(StoreQuery query) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(WireFormat.CONTENT_TYPE);
        properties.setDeliveryMode(MessageDeliveryMode.NON_PERSISTENT);
        properties.setExpiration(Long.toString(timeout.replyTimeout().toMillis()));
        Message request = new Message(WireFormat.encode(query), properties);
        long start = System.nanoTime();
        String outcome = "error";
        try {
            Message reply = template.sendAndReceive("", Topology.STORE_RPC_QUEUE, request);
            if (reply == null) {
                outcome = "timeout";
                throw new StoreQueryFailedException(504, "store-service did not answer within "
                        + timeout.replyTimeout().toMillis() + " ms; retry later");
            }
            StoreQueryReply decoded = WireFormat.decode(reply.getBody(), StoreQueryReply.class);
            outcome = decoded.status().name();
            return decoded;
        } catch (AmqpException e) {
            outcome = "unreachable";
            throw new StoreQueryFailedException(503, "the broker is unreachable; retry later", e);
        } catch (MalformedMessageException e) {
            outcome = "malformed";
            throw new StoreQueryFailedException(502, "store-service sent an unreadable reply", e);
        } finally {
            Timer.builder("store.rpc.latency")
                    .description("Store query round trip over the broker")
                    .tags("kind", query.kind().name(), "outcome", outcome)
                    .register(registry)
                    .record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
    }
}
