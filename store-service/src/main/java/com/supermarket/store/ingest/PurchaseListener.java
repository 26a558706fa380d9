package com.supermarket.store.ingest;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.stereotype.Component;

/**
 * Applies each purchase delivered from a shard queue to the counts, then acknowledges it. A
 * body that is not a purchase, or names a store or item outside the platform's ranges, is
 * rejected without requeue, so the shard queue's dead-letter policy parks it. A redelivered
 * purchase is acknowledged without being counted again. Thread-safe (stateless apart from
 * thread-safe meters).
 */
@Component
class PurchaseListener implements ChannelAwareMessageListener {

    private static final Logger log = LoggerFactory.getLogger(PurchaseListener.class);

    private final StoreCounts counts;
    private final Counter applied;
    private final Counter linesApplied;
    private final Counter duplicates;
    private final Counter malformed;
    private final Counter outOfRange;

    PurchaseListener(StoreCounts counts, MeterRegistry registry) {
        this.counts = counts;
        this.applied = Counter.builder("store.purchases.applied")
                .description("Purchases added to the counts").register(registry);
        this.linesApplied = Counter.builder("store.purchase.lines.applied")
                .description("Item lines added to the counts").register(registry);
        this.duplicates = Counter.builder("store.purchases.duplicates")
                .description("Redelivered purchases skipped because their id was already counted").register(registry);
        this.malformed = rejected(registry, "malformed");
        this.outOfRange = rejected(registry, "out-of-range");
    }

    private static Counter rejected(MeterRegistry registry, String reason) {
        return Counter.builder("store.purchases.rejected").tag("reason", reason)
                .description("Poison purchase messages rejected to the dead-letter exchange").register(registry);
    }

    @Override
    public void onMessage(Message message, Channel channel) throws Exception {
        long deliveryTag = message.getMessageProperties().getDeliveryTag();
        Purchase purchase;
        try {
            purchase = WireFormat.decode(message.getBody(), Purchase.class);
        } catch (MalformedMessageException e) {
            reject(channel, deliveryTag, malformed, message, e.getMessage());
            return;
        }
        switch (counts.apply(purchase)) {
            case APPLIED -> {
                applied.increment();
                linesApplied.increment(purchase.items().size());
            }
            case DUPLICATE -> duplicates.increment();
            case OUT_OF_RANGE -> {
                reject(channel, deliveryTag, outOfRange, message, "store or item outside 1.." + counts.maxStores()
                        + " / 1.." + counts.maxItemId() + " in purchase " + purchase.purchaseId());
                return;
            }
        }
        // If this ack is lost with the connection, the redelivery is recognised as a duplicate.
        channel.basicAck(deliveryTag, false);
    }

    private static void reject(Channel channel, long deliveryTag, Counter counter, Message message, String reason)
            throws Exception {
        counter.increment();
        log.warn("Rejecting poison message {} from {} to the dead-letter exchange: {}",
                message.getMessageProperties().getMessageId(), message.getMessageProperties().getConsumerQueue(), reason);
        channel.basicReject(deliveryTag, false);
    }
}
