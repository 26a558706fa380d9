package com.supermarket.store.ingest;

import com.rabbitmq.client.Channel;
import com.supermarket.broker.MessageTracing;
import com.supermarket.broker.Parking;
import com.supermarket.broker.PurchaseLogContext;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import com.supermarket.store.durability.Acknowledger;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.Span;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.stereotype.Component;

/**
 * Applies each message delivered from a shard queue, a {@link PurchaseBatch}, to the counts, and hands it to the {@link Acknowledger}, which acknowledges it once
 * its effect is durable. Each purchase counts once (the dedup window is per purchase id). A
 * poison element of a batch (undecodable, or naming a store or item outside the platform's
 * ranges, or a store of another store partition) is parked alone in {@code purchases.parking} with a publisher confirm before its
 * neighbours are counted; a message that cannot be read at all is rejected without requeue, so
 * the shard queue's dead-letter policy parks it. Nothing is requeued in a loop: if parking
 * fails, the channel is closed and the broker redelivers the message once a new consumer is up.
 * With tracing on, each message is handled in a span of its own ({@link MessageTracing#handling})
 * linked to its purchases' requests; each counted (at debug level) or parked purchase is logged
 * with its ids ({@link PurchaseLogContext}).
 *
 * <p>Thread-safe (stateless apart from thread-safe meters); each consumer calls it from its own
 * channel's thread.
 */
@Component
class PurchaseListener implements ChannelAwareMessageListener {

    private static final Logger log = LoggerFactory.getLogger(PurchaseListener.class);
    /** The span of counting one message (tracing on). */
    static final String CONSUME_SPAN = "store-service consume";

    /** How long parking one poison purchase may wait for the broker's confirm. */
    private static final Duration PARK_CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final StoreCounts counts;
    private final Acknowledger acknowledger;
    private final Parking parking;
    private final Counter applied;
    private final Counter linesApplied;
    private final Counter duplicates;
    private final Counter malformed;
    private final Counter outOfRange;
    private final Counter otherPartition;
    private final StorePartition partition;
    private final MessageTracing tracing;

    PurchaseListener(StoreCounts counts, Acknowledger acknowledger, Parking parking, StorePartition partition,
                     MessageTracing tracing, MeterRegistry registry) {
        this.counts = counts;
        this.tracing = tracing;
        this.partition = partition;
        this.acknowledger = acknowledger;
        this.parking = parking;
        this.applied = Counter.builder("store.purchases.applied")
                .description("Purchases added to the counts").register(registry);
        this.linesApplied = Counter.builder("store.purchase.lines.applied")
                .description("Item lines added to the counts").register(registry);
        this.duplicates = Counter.builder("store.purchases.duplicates")
                .description("Redelivered purchases skipped because their id was already counted").register(registry);
        this.malformed = rejected(registry, "malformed");
        this.outOfRange = rejected(registry, "out-of-range");
        this.otherPartition = rejected(registry, "other-partition");
    }

    private static Counter rejected(MeterRegistry registry, String reason) {
        return Counter.builder("store.purchases.rejected").tag("reason", reason)
                .description("Poison purchases (or whole unreadable messages) parked in the dead-letter queue")
                .register(registry);
    }

    @Override
    public void onMessage(Message message, Channel channel) throws Exception {
        MessageProperties properties = message.getMessageProperties();
        PurchaseBatch.Decoded decoded;
        try {
            decoded = PurchaseBatch.decode(properties.getType(), message.getBody());
        } catch (MalformedMessageException e) {
            malformed.increment();
            log.warn("Rejecting unreadable message {} from {} to the dead-letter exchange: {}",
                    properties.getMessageId(), properties.getConsumerQueue(), e.getMessage());
            channel.basicReject(properties.getDeliveryTag(), false);
            return;
        }
        try (MessageTracing.Handling traced = tracing.handling(CONSUME_SPAN, Span.Kind.CONSUMER, properties,
                decoded.purchases())) {
            apply(decoded, channel, properties);
        }
    }

    private void apply(PurchaseBatch.Decoded decoded, Channel channel, MessageProperties properties)
            throws IOException, InterruptedException {
        List<PurchaseBatch.Poison> poison = new ArrayList<>(decoded.poison());
        List<Purchase> inRange = new ArrayList<>(decoded.purchases().size());
        for (Purchase purchase : decoded.purchases()) {
            if (!partition.owns(purchase.storeId())) {
                // Counted here, the store's purchases would be split over two partitions and its
                // owner's answers short. Only a shard count the partitions stopped dividing, or
                // producers and consumers disagreeing on it, brings one here.
                otherPartition.increment();
                poison.add(PurchaseBatch.Poison.of(purchase, "store " + purchase.storeId()
                        + " belongs to store partition " + StorePartition.ownerOf(purchase.storeId(), partition.partitions())
                        + ", not to this " + partition));
            } else {
                String outside = counts.ranges().outOfRange(purchase);
                if (outside == null) {
                    inRange.add(purchase);
                } else {
                    outOfRange.increment();
                    poison.add(PurchaseBatch.Poison.of(purchase, outside));
                }
            }
        }
        malformed.increment(decoded.poison().size());
        if (!park(poison, channel, properties)) {
            return;
        }
        for (Purchase purchase : inRange) {
            switch (counts.apply(purchase)) {
                case APPLIED -> {
                    applied.increment();
                    linesApplied.increment(purchase.items().size());
                    logCounted(purchase, "Counted");
                }
                case DUPLICATE -> {
                    duplicates.increment();
                    logCounted(purchase, "Skipped the redelivered");
                }
            }
        }
        // Duplicates are logged too: their message is acknowledged only once its own record is
        // durable, which then holds them whether or not the original's record became durable.
        acknowledger.acknowledge(channel, properties.getDeliveryTag(), inRange);
    }

    private static void logCounted(Purchase purchase, String what) {
        if (log.isDebugEnabled()) {
            try (PurchaseLogContext ids = PurchaseLogContext.of(purchase)) {
                log.debug("{} purchase {} of store {}", what, purchase.purchaseId(), purchase.storeId());
            }
        }
    }

    /** Parks each poison element alone; false (channel closed, message left to redelivery) if one could not be. */
    private boolean park(List<PurchaseBatch.Poison> poison, Channel channel, MessageProperties properties)
            throws IOException, InterruptedException {
        for (PurchaseBatch.Poison element : poison) {
            try (PurchaseLogContext ids = element.purchase() == null ? null : PurchaseLogContext.of(element.purchase())) {
                parking.park(element, properties.getConsumerQueue(), PARK_CONFIRM_TIMEOUT);
                log.warn("Parked a poison purchase of message {} from {}: {}", properties.getMessageId(),
                        properties.getConsumerQueue(), element.reason());
            } catch (IOException e) {
                // Acknowledging would lose the element, rejecting would lose its neighbours and
                // requeueing would loop: close the channel, so the message comes back to a new
                // consumer after the container's restart delay.
                log.error("Could not park a poison purchase of message {} from {} ({}); closing the channel so the "
                        + "message is redelivered", properties.getMessageId(), properties.getConsumerQueue(), e.toString());
                channel.abort();
                return false;
            }
        }
        return true;
    }
}
