package com.supermarket.contract;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * Parks one poison purchase of a batch on its own: publishes its raw JSON to
 * {@link Topology#DEAD_LETTER_EXCHANGE} (which feeds {@link Topology#PARKING_QUEUE}) and waits
 * for the broker's confirm, so the consumer may then acknowledge the batch without losing the
 * poison element or its neighbours. A whole message that cannot be read is not parked here: the
 * consumer rejects it and the shard queue's dead-letter policy parks it.
 *
 * <p>Poison is rare, so this favours simplicity over speed: it switches the consumer's channel
 * into confirm mode (idempotent) and waits for each confirm. Not thread-safe per channel, like
 * the channel itself.
 */
public final class Parking {

    /** Header naming why the element was parked. */
    public static final String REASON_HEADER = "x-parked-reason";

    /** Header naming the queue the element came from. */
    public static final String SOURCE_QUEUE_HEADER = "x-parked-from";

    private Parking() {
    }

    /**
     * Publishes {@code poison} to the dead-letter exchange and waits for the confirm.
     *
     * @throws IOException if the broker refused it, did not confirm within {@code timeout}, or
     *                     the channel failed; the caller must then leave the batch unacknowledged
     *                     (its redelivery parks the element again)
     */
    public static void park(Channel channel, PurchaseBatch.Poison poison, String sourceQueue, Duration timeout)
            throws IOException, InterruptedException {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .contentType(WireFormat.CONTENT_TYPE)
                .deliveryMode(2)
                .headers(Map.of(REASON_HEADER, poison.reason(), SOURCE_QUEUE_HEADER, String.valueOf(sourceQueue)))
                .build();
        channel.confirmSelect();
        channel.basicPublish(Topology.DEAD_LETTER_EXCHANGE, "", properties, poison.json());
        try {
            channel.waitForConfirmsOrDie(timeout.toMillis());
        } catch (TimeoutException e) {
            throw new IOException("the broker did not confirm a parked purchase within " + timeout, e);
        }
    }
}
