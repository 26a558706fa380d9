package com.supermarket.purchases.ingest;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.broker.MessageTracing;
import com.supermarket.broker.Parking;
import com.supermarket.broker.PurchaseLogContext;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.Span;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.stereotype.Component;

/**
 * Applies one delivery from a {@code purchaseX} shard queue: a {@link PurchaseBatch} is decoded, its purchases stored through the {@link BatchWriter} (each
 * exactly once: the store is idempotent on the purchase id), each poison element, and each
 * purchase the writer proves bad, parked alone with a confirm ({@link Parking}), and only
 * then the message is acknowledged ({@code multiple}: every earlier delivery on the channel is
 * settled already). A message that cannot be read at all is rejected without requeue, so the
 * shard queue's dead-letter policy parks it whole.
 *
 * <p>An unexpected error (not a failed write, which the writer rides out or isolates) requeues the
 * message after a growing backoff, so it is neither stuck unacknowledged until the channel
 * closes nor retried in a tight loop; after {@code maxAttemptsOnError} deliveries it is rejected
 * to the parking queue ({@code purchases_errors_total} counts them).
 *
 * <p>With tracing on, each delivery is handled in a span of its own
 * ({@link MessageTracing#handling}) linked to its purchases' requests; each stored (at debug
 * level) or parked purchase is logged with its ids ({@link PurchaseLogContext}).
 *
 * <p>Thread-safe: each container consumer calls it with its own channel; the attempt counts are
 * a concurrent map, touched only after a failure.
 */
@Component
class PurchaseBatchListener implements ChannelAwareMessageListener {

    private static final Logger log = LoggerFactory.getLogger(PurchaseBatchListener.class);
    private static final Duration PARK_TIMEOUT = Duration.ofSeconds(10);
    /** Messages whose unexpected failures are remembered; older ones start counting afresh. */
    private static final int REMEMBERED_FAILURES = 1024;
    /** The span of storing one message (tracing on). */
    static final String CONSUME_SPAN = "purchases-service consume";

    private final BatchWriter writer;
    private final Parking parking;
    private final int maxAttemptsOnError;
    private final Map<Long, Integer> attemptsOnError = new ConcurrentHashMap<>();
    private final Counter malformedMessages;
    private final Counter poisonPurchases;
    private final Counter errors;
    private final MessageTracing tracing;

    PurchaseBatchListener(BatchWriter writer, Parking parking, IngestProperties properties, MessageTracing tracing,
                          MeterRegistry registry) {
        this.writer = writer;
        this.tracing = tracing;
        this.parking = parking;
        this.maxAttemptsOnError = properties.maxAttemptsOnError();
        this.malformedMessages = Counter.builder("purchases.poison").tag("kind", "message")
                .description("Unreadable messages rejected whole, and poison purchases parked alone").register(registry);
        this.poisonPurchases = Counter.builder("purchases.poison").tag("kind", "purchase")
                .description("Unreadable messages rejected whole, and poison purchases parked alone").register(registry);
        this.errors = Counter.builder("purchases.errors")
                .description("Deliveries requeued (or finally parked) after an unexpected error").register(registry);
    }

    /**
     * Settles the delivery on {@code channel}, the one it came on
     * ({@link com.supermarket.broker.ShardConsumers#onDeliveringChannel}). A channel closed
     * meanwhile leaves the message to the broker, which redelivers it; the store ignores what it
     * holds already.
     */
    @Override
    public void onMessage(Message message, Channel channel) throws Exception {
        try {
            settle(message, channel);
        } catch (ShutdownSignalException e) {
            log.info("The channel of a message from {} closed before it was settled; the broker redelivers it: {}",
                    message.getMessageProperties().getConsumerQueue(), e.getMessage());
        }
    }

    private void settle(Message message, Channel channel) throws Exception {
        MessageProperties properties = message.getMessageProperties();
        long tag = properties.getDeliveryTag();
        PurchaseBatch.Decoded decoded;
        try {
            decoded = PurchaseBatch.decode(properties.getType(), message.getBody());
        } catch (MalformedMessageException e) {
            log.warn("Rejecting an unreadable message (id {}) from {} to the parking queue: {}",
                    properties.getMessageId(), properties.getConsumerQueue(), e.getMessage());
            malformedMessages.increment();
            channel.basicReject(tag, false);
            return;
        }
        try (MessageTracing.Handling traced = tracing.handling(CONSUME_SPAN, Span.Kind.CONSUMER, properties,
                decoded.purchases())) {
            store(message, channel, decoded);
        }
    }

    private void store(Message message, Channel channel, PurchaseBatch.Decoded decoded) throws Exception {
        MessageProperties properties = message.getMessageProperties();
        long tag = properties.getDeliveryTag();
        try {
            Set<UUID> refused = decoded.purchases().isEmpty() ? Set.of() : writer.write(decoded.purchases());
            for (PurchaseBatch.Poison poison : decoded.poison()) {
                park(poison, properties);
            }
            for (Purchase purchase : decoded.purchases()) {
                if (refused.contains(purchase.purchaseId())) {
                    park(PurchaseBatch.Poison.of(purchase, "refused by the purchase store"),
                            properties);
                } else if (log.isDebugEnabled()) {
                    try (PurchaseLogContext ids = PurchaseLogContext.of(purchase)) {
                        log.debug("Stored purchase {} of store {}", purchase.purchaseId(), purchase.storeId());
                    }
                }
            }
            channel.basicAck(tag, true);
            if (!attemptsOnError.isEmpty()) {
                settled(key(message.getBody()));
            }
        } catch (InterruptedException e) {
            channel.basicNack(tag, false, true);
            log.info("Stopping: requeued a message of {} purchase(s) that was waiting for the store",
                    decoded.purchases().size());
            Thread.currentThread().interrupt();
        } catch (ShutdownSignalException e) {
            throw e; // the channel, not the message: nothing to count or requeue
        } catch (Exception e) {
            requeueOrPark(channel, tag, key(message.getBody()), e);
        }
    }

    private void park(PurchaseBatch.Poison poison, MessageProperties properties) throws Exception {
        poisonPurchases.increment();
        try (PurchaseLogContext ids = poison.purchase() == null ? null : PurchaseLogContext.of(poison.purchase())) {
            log.warn("Parking one poison purchase of a message from {}: {}", properties.getConsumerQueue(), poison.reason());
        }
        parking.park(poison, properties.getConsumerQueue(), PARK_TIMEOUT);
    }

    private void requeueOrPark(Channel channel, long tag, long key, Exception failure) throws Exception {
        errors.increment();
        if (attemptsOnError.size() > REMEMBERED_FAILURES) {
            attemptsOnError.clear(); // bounded memory; a forgotten message merely starts counting again
        }
        int attempt = attemptsOnError.merge(key, 1, Integer::sum);
        if (attempt >= maxAttemptsOnError) {
            log.error("Message failed {} time(s) with an unexpected error, rejecting it to the parking queue", attempt, failure);
            settled(key);
            channel.basicReject(tag, false);
            return;
        }
        try {
            long waited = writer.backoff(attempt);
            log.warn("Unexpected error storing a message (attempt {} of {}), requeued it after {} ms", attempt,
                    maxAttemptsOnError, waited, failure);
        } catch (InterruptedException stopping) {
            Thread.currentThread().interrupt();
        } finally {
            channel.basicNack(tag, false, true);
        }
    }

    private void settled(long key) {
        attemptsOnError.remove(key);
    }

    /** Identifies a message across redeliveries (its body), for counting unexpected failures. */
    private static long key(byte[] body) {
        CRC32C crc = new CRC32C();
        crc.update(body);
        return ((long) body.length << 32) | crc.getValue();
    }
}
