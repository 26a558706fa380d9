package com.supermarket.store;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A plain amqp-client RPC caller over direct reply-to, as purchase-api calls store-service: the
 * test's independent view of the wire. Not thread-safe (one channel).
 */
final class RpcClient implements AutoCloseable {

    private static final String DIRECT_REPLY_TO = "amq.rabbitmq.reply-to";

    private final Channel channel;
    private final String queue;
    private final Map<String, BlockingQueue<Reply>> pending = new ConcurrentHashMap<>();

    /** A raw reply, with the properties a test may want to check. */
    record Reply(AMQP.BasicProperties properties, byte[] body) {
    }

    RpcClient(Connection connection) throws IOException {
        this(connection, Topology.STORE_RPC_QUEUE);
    }

    /** @param queue the query queue to ask (a store partition's) */
    RpcClient(Connection connection, String queue) throws IOException {
        this.queue = queue;
        channel = connection.createChannel();
        channel.basicConsume(DIRECT_REPLY_TO, true, (tag, delivery) -> {
            BlockingQueue<Reply> waiting = pending.get(delivery.getProperties().getCorrelationId());
            if (waiting != null) {
                waiting.add(new Reply(delivery.getProperties(), delivery.getBody()));
            }
        }, tag -> { });
    }

    StoreQueryReply query(StoreQuery.Kind kind, int id, int limit) throws Exception {
        return queries(List.of(new StoreQuery(kind, id, limit))).getFirst();
    }

    /** One {@link StoreQueries} message; the replies in the queries' order. */
    List<StoreQueryReply> queries(List<StoreQuery> queries) throws Exception {
        Reply reply = call(WireFormat.encode(new StoreQueries(queries)), StoreQueries.MESSAGE_TYPE);
        return WireFormat.decode(reply.body(), StoreQueries.Replies.class).replies();
    }

    /** @param type the message's AMQP type */
    Reply call(byte[] body, String type) throws Exception {
        String correlationId = UUID.randomUUID().toString();
        BlockingQueue<Reply> reply = new ArrayBlockingQueue<>(1);
        pending.put(correlationId, reply);
        try {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder()
                    .contentType(WireFormat.CONTENT_TYPE).type(type).correlationId(correlationId).replyTo(DIRECT_REPLY_TO)
                    .expiration("10000").build(), body);
            Reply answer = reply.poll(10, TimeUnit.SECONDS);
            if (answer == null) {
                throw new AssertionError("no RPC reply within 10 s");
            }
            return answer;
        } finally {
            pending.remove(correlationId);
        }
    }

    @Override
    public void close() throws Exception {
        channel.close();
    }
}
