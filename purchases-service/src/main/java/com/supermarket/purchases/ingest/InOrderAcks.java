package com.supermarket.purchases.ingest;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles each consumer channel's deliveries so that an acknowledgement with {@code multiple}
 * never covers a delivery still being written or parked. Each delivery is registered
 * ({@link #expect}) by its consumer thread, so a channel's deliveries are held in delivery order;
 * they finish in any order (a message waiting for its park finishes after later messages of
 * its group). A channel is acknowledged up to the highest tag before its first unsettled
 * delivery, once per call however many deliveries that covers; a delivery requeued or rejected
 * is settled alone at once, and a later {@code multiple} ack passes over it (the broker no longer
 * counts it as unacknowledged).
 *
 * <p>Acks go on the channel each delivery came on (the raw amqp-client channel, as
 * {@code ShardConsumers} hands it over). A channel that turns out closed is forgotten with its
 * deliveries: the broker redelivers them, and the store ignores the purchases it holds already.
 *
 * <p>Thread-safe: one monitor guards the deliveries, and every ack, nack and reject is sent under
 * it, so a channel's settlements reach it in the order they were decided (an ack up to a tag sent
 * after an ack up to a later one would name a tag the channel no longer has, and the broker would
 * close the channel). Sending does not wait for the broker, and the consuming connection never
 * publishes, so a broker alarm does not block it.
 */
final class InOrderAcks {

    private static final Logger log = LoggerFactory.getLogger(InOrderAcks.class);

    private enum State { PENDING, ACK, SETTLED }

    /** One delivery to be settled; its state is guarded by the {@link InOrderAcks} monitor. */
    static final class Delivery {
        private final Channel channel;
        private final long tag;
        private State state = State.PENDING;

        private Delivery(Channel channel, long tag) {
            this.channel = channel;
            this.tag = tag;
        }

        Channel channel() {
            return channel;
        }

        long tag() {
            return tag;
        }
    }

    // Guarded by this; each channel's deliveries in delivery order.
    private final Map<Channel, ArrayDeque<Delivery>> unsettled = new IdentityHashMap<>();

    /** Registers a delivery; called by the channel's consumer thread, in delivery order. */
    synchronized Delivery expect(Channel channel, long tag) {
        Delivery delivery = new Delivery(channel, tag);
        unsettled.computeIfAbsent(channel, c -> new ArrayDeque<>()).add(delivery);
        return delivery;
    }

    /** Acknowledges {@code done} as soon as every earlier delivery of their channels is settled. */
    synchronized void acknowledge(Iterable<Delivery> done) {
        Set<Channel> channels = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Delivery delivery : done) {
            delivery.state = State.ACK;
            channels.add(delivery.channel);
        }
        channels.forEach(this::settleReady);
    }

    /** Requeues {@code delivery} now, alone. */
    synchronized void requeue(Delivery delivery) {
        settleAlone(delivery, true);
    }

    /** Rejects {@code delivery} now, alone, without requeue (the shard queue's dead-letter policy parks it). */
    synchronized void reject(Delivery delivery) {
        settleAlone(delivery, false);
    }

    /** Deliveries registered and not yet settled, on every channel. */
    synchronized int pending() {
        return unsettled.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    private void settleAlone(Delivery delivery, boolean requeue) {
        delivery.state = State.SETTLED;
        if (!unsettled.containsKey(delivery.channel)) {
            return; // its channel closed: the broker has it back already
        }
        try {
            if (requeue) {
                delivery.channel.basicNack(delivery.tag, false, true);
            } else {
                delivery.channel.basicReject(delivery.tag, false);
            }
        } catch (IOException | ShutdownSignalException e) {
            closed(delivery.channel, e);
            return;
        }
        settleReady(delivery.channel);
    }

    /** Acks {@code channel} up to the highest acknowledgeable tag before its first pending delivery. */
    private void settleReady(Channel channel) {
        ArrayDeque<Delivery> deliveries = unsettled.get(channel);
        if (deliveries == null) {
            return;
        }
        long highest = -1;
        while (!deliveries.isEmpty() && deliveries.peekFirst().state != State.PENDING) {
            Delivery settled = deliveries.pollFirst();
            if (settled.state == State.ACK) {
                highest = settled.tag;
            }
        }
        if (deliveries.isEmpty()) {
            unsettled.remove(channel);
        }
        if (highest >= 0) {
            try {
                channel.basicAck(highest, true);
            } catch (IOException | ShutdownSignalException e) {
                closed(channel, e);
            }
        }
    }

    private void closed(Channel channel, Exception failure) {
        ArrayDeque<Delivery> forgotten = unsettled.remove(channel);
        log.info("A consumer channel closed before its deliveries were settled; the broker redelivers them "
                + "({} more waiting on it): {}", forgotten == null ? 0 : forgotten.size(), failure.toString());
    }
}
