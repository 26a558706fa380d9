package com.supermarket.purchases.ingest;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.broker.MessageTracing;
import com.supermarket.broker.Parking;
import com.supermarket.broker.PurchaseLogContext;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.Span;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.stereotype.Component;

/**
 * Takes one delivery from a {@code purchaseX} shard queue: decodes its {@link PurchaseBatch} and
 * hands it to the {@link GroupWriter}, which stores its purchases with those of other messages
 * (each exactly once: the store is idempotent on the purchase id) and then lets it park each
 * poison element, and each purchase the writer proves bad, alone with a confirm
 * ({@link Parking}), before the message is acknowledged. A message that cannot be read at all is
 * rejected here without requeue, so the shard queue's dead-letter policy parks it whole.
 *
 * <p>With tracing on, each message's settling (its parks and log lines, once its purchases are
 * written) is handled in a span of its own ({@link MessageTracing#handling}) linked to its
 * purchases' requests; each stored (at debug level) or parked purchase is logged with its ids
 * ({@link PurchaseLogContext}).
 *
 * <p>Thread-safe: each container consumer calls it with its own channel; a message's settling
 * runs on the group writer's thread or a park's own, one at a time.
 */
@Component
class PurchaseBatchListener implements ChannelAwareMessageListener {

    private static final Logger log = LoggerFactory.getLogger(PurchaseBatchListener.class);
    private static final Duration PARK_TIMEOUT = Duration.ofSeconds(10);
    /** The span of settling one message (tracing on). */
    static final String CONSUME_SPAN = "purchases-service consume";

    private final GroupWriter writer;
    private final Parking parking;
    private final Counter malformedMessages;
    private final Counter poisonPurchases;
    private final MessageTracing tracing;

    PurchaseBatchListener(GroupWriter writer, Parking parking, MessageTracing tracing, MeterRegistry registry) {
        this.writer = writer;
        this.tracing = tracing;
        this.parking = parking;
        this.malformedMessages = Counter.builder("purchases.poison").tag("kind", "message")
                .description("Unreadable messages rejected whole, and poison purchases parked alone").register(registry);
        this.poisonPurchases = Counter.builder("purchases.poison").tag("kind", "purchase")
                .description("Unreadable messages rejected whole, and poison purchases parked alone").register(registry);
    }

    /**
     * Hands the delivery over with {@code channel}, the one it came on
     * ({@link com.supermarket.broker.ShardConsumers#onDeliveringChannel}), where it is settled. A
     * channel closed meanwhile leaves the message to the broker, which redelivers it; the store
     * ignores what it holds already.
     */
    @Override
    public void onMessage(Message message, Channel channel) throws Exception {
        MessageProperties properties = message.getMessageProperties();
        long tag = properties.getDeliveryTag();
        PurchaseBatch.Decoded decoded;
        try {
            decoded = PurchaseBatch.decode(properties.getType(), message.getBody());
        } catch (MalformedMessageException e) {
            log.warn("Rejecting an unreadable message (id {}) from {} to the parking queue: {}",
                    properties.getMessageId(), properties.getConsumerQueue(), e.getMessage());
            malformedMessages.increment();
            try {
                channel.basicReject(tag, false);
            } catch (ShutdownSignalException closed) {
                log.info("The channel of a message from {} closed before it was settled; the broker redelivers it: {}",
                        properties.getConsumerQueue(), closed.getMessage());
            }
            return;
        }
        writer.submit(channel, tag, new Decoded(message, decoded));
    }

    /** A decoded message waiting for its group's write. */
    private final class Decoded implements GroupWriter.Delivery {

        private final Message message;
        private final PurchaseBatch.Decoded decoded;

        Decoded(Message message, PurchaseBatch.Decoded decoded) {
            this.message = message;
            this.decoded = decoded;
        }

        @Override
        public List<Purchase> purchases() {
            return decoded.purchases();
        }

        @Override
        public boolean parks(Set<UUID> refused) {
            if (!decoded.poison().isEmpty()) {
                return true;
            }
            if (!refused.isEmpty()) {
                for (Purchase purchase : decoded.purchases()) {
                    if (refused.contains(purchase.purchaseId())) {
                        return true;
                    }
                }
            }
            return false;
        }

        @Override
        public void settle(Set<UUID> refused) throws Exception {
            MessageProperties properties = message.getMessageProperties();
            try (MessageTracing.Handling traced = tracing.handling(CONSUME_SPAN, Span.Kind.CONSUMER, properties,
                    decoded.purchases())) {
                for (PurchaseBatch.Poison poison : decoded.poison()) {
                    park(poison, properties);
                }
                for (Purchase purchase : decoded.purchases()) {
                    if (refused.contains(purchase.purchaseId())) {
                        park(PurchaseBatch.Poison.of(purchase, "refused by the purchase store"), properties);
                    } else if (log.isDebugEnabled()) {
                        try (PurchaseLogContext ids = PurchaseLogContext.of(purchase)) {
                            log.debug("Stored purchase {} of store {}", purchase.purchaseId(), purchase.storeId());
                        }
                    }
                }
            }
        }

        @Override
        public byte[] body() {
            return message.getBody();
        }
    }

    private void park(PurchaseBatch.Poison poison, MessageProperties properties) throws Exception {
        poisonPurchases.increment();
        try (PurchaseLogContext ids = poison.purchase() == null ? null : PurchaseLogContext.of(poison.purchase())) {
            log.warn("Parking one poison purchase of a message from {}: {}", properties.getConsumerQueue(), poison.reason());
        }
        parking.park(poison, properties.getConsumerQueue(), PARK_TIMEOUT);
    }
}
