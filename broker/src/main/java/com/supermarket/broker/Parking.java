package com.supermarket.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * Parks one poison purchase of a batch on its own: publishes its raw JSON to
 * {@link Topology#DEAD_LETTER_EXCHANGE} (which feeds {@link Topology#PARKING_QUEUE}) and waits
 * for the broker's confirm, so the consumer may then acknowledge the batch without losing the
 * poison element or its neighbours. A whole message that cannot be read is not parked here: the
 * consumer rejects it and the shard queue's dead-letter policy parks it.
 *
 * <p>It publishes on the service's publishing connection, never on the consumer's: under a
 * memory or disk alarm the broker stops reading from every connection that publishes, acks
 * included, so a park on the consumer's connection would stop every shard it consumes until the
 * alarm clears. Here only the parking waits (and fails after its timeout, leaving the message to
 * redelivery); the consumer then settles the message on its own channel. Parking is therefore
 * at least once: a park that timed out may still land once the alarm clears, beside the one its
 * redelivery makes (the same element and reason; an operator handles the parking queue by
 * purchase id).
 *
 * <p>Poison is rare, so this favours simplicity over speed: a cached channel of the publishing
 * connection in confirm mode, one confirm waited for per element. The AMQP client's channel
 * round trips must be bounded ({@link BrokerBeans}' client timeouts): under an alarm, opening a
 * channel on a blocked connection is never answered. Thread-safe (each call takes
 * its own channel).
 */
public final class Parking {

    /** Header naming why the element was parked. */
    public static final String REASON_HEADER = "x-parked-reason";

    /** Header naming the queue the element came from. */
    public static final String SOURCE_QUEUE_HEADER = "x-parked-from";

    /** How long dropping a connection waits for the broker's answer before closing the socket. */
    private static final int ABORT_TIMEOUT_MILLIS = 1_000;

    private final ConnectionFactory publishing;

    /**
     * @param publishing the factory of the service's publishing connection
     *                   ({@code CachingConnectionFactory#getPublisherConnectionFactory()}), never
     *                   the one its shard consumers are on
     */
    public Parking(ConnectionFactory publishing) {
        this.publishing = publishing;
    }

    /**
     * Publishes {@code poison} to the dead-letter exchange and waits for the confirm.
     *
     * @throws IOException if the broker refused it, did not confirm within {@code timeout}, or
     *                     the publishing connection or channel failed; the caller must then
     *                     leave the batch unacknowledged (its redelivery parks the element again)
     */
    public void park(PurchaseBatch.Poison poison, String sourceQueue, Duration timeout) throws IOException, InterruptedException {
        Connection connection;
        try {
            connection = publishing.createConnection();
        } catch (AmqpException e) {
            throw new IOException("no connection to park a purchase on", e);
        }
        Channel channel = null;
        boolean parked = false;
        try {
            channel = connection.createChannel(false);
            park(channel, poison, sourceQueue, timeout);
            parked = true;
        } catch (AmqpException | ShutdownSignalException e) {
            // The publishing connection's failure, not the caller's: the caller must not read it
            // as its own channel closing.
            throw new IOException("the publishing connection failed while parking a purchase", e);
        } finally {
            if (!parked) {
                drop(connection);
            }
            if (channel != null) {
                RabbitUtils.closeChannel(channel);
            }
        }
    }

    /**
     * Drops the whole publishing connection after a park that failed. Under an alarm the broker
     * has stopped reading from it, so closing just the channel never reaches the broker while the
     * client soon reuses the channel's number; a park on such a channel was seen to end as
     * confirmed without reaching the parking queue. A new connection starts clean (the factory
     * opens it on the next use; the alarm blocks it again only once it publishes).
     */
    private static void drop(Connection connection) {
        connection.getDelegate().abort(ABORT_TIMEOUT_MILLIS);
    }

    /** Publishes {@code poison} on {@code channel} (switched into confirm mode) and waits for the confirm. */
    static void park(Channel channel, PurchaseBatch.Poison poison, String sourceQueue, Duration timeout)
            throws IOException, InterruptedException {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .contentType(WireFormat.CONTENT_TYPE)
                .deliveryMode(2)
                .headers(Map.of(REASON_HEADER, poison.reason(), SOURCE_QUEUE_HEADER, String.valueOf(sourceQueue)))
                .build();
        if (channel.getNextPublishSeqNo() == 0) {
            // A round trip, which a blocked connection would never answer: only on a new channel.
            channel.confirmSelect();
        }
        channel.basicPublish(Topology.DEAD_LETTER_EXCHANGE, "", properties, poison.json());
        try {
            if (!channel.waitForConfirms(timeout.toMillis())) {
                throw new IOException("the broker refused (nacked) a parked purchase");
            }
        } catch (TimeoutException e) {
            throw new IOException("the broker did not confirm a parked purchase within " + timeout, e);
        }
    }
}
