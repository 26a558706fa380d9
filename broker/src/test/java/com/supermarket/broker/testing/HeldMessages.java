package com.supermarket.broker.testing;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * Messages published now that reach their target exchange only when the test {@link #release}s
 * them, even while a broker alarm blocks every publishing connection: they wait in a queue of
 * their own, published there through a fanout exchange (so each keeps its routing key), and the
 * release rejects each of them without requeue, so the broker itself dead-letters them into the
 * target exchange with their routing keys; rejecting is no publish, so no alarm blocks it. Not
 * thread-safe.
 */
public final class HeldMessages {

    private final TestBroker broker;
    private final String name;

    HeldMessages(TestBroker broker, String name, String targetExchange) {
        this.broker = broker;
        this.name = "held." + name;
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.exchangeDeclare(this.name, BuiltinExchangeType.FANOUT, false, true, null);
            channel.queueDeclare(this.name, true, false, false, Map.of("x-dead-letter-exchange", targetExchange));
            channel.queueBind(this.name, this.name, "");
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException("cannot declare " + this.name, e);
        }
    }

    /** The exchange to publish the held messages to, with the routing keys they need at the target. */
    public String exchange() {
        return name;
    }

    /** Sends every held message on to the target exchange. */
    public void release() {
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            for (GetResponse held = channel.basicGet(name, false); held != null; held = channel.basicGet(name, false)) {
                channel.basicReject(held.getEnvelope().getDeliveryTag(), false);
            }
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException("cannot release " + name, e);
        }
    }
}
