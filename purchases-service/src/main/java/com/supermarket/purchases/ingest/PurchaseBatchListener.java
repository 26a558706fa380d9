package com.supermarket.purchases.ingest;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.MalformedMessageException;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;
import org.springframework.stereotype.Component;

/**
 * Handles one consumer's batch of deliveries: poison messages are rejected without requeue (the
 * shard queues dead-letter them to the parking queue), the rest is stored through the
 * {@link BatchWriter}, and only then acknowledged, with one {@code multiple} ack.
 *
 * <p>Thread-safe: stateless; each container consumer calls it with its own channel.
 */
@Component
class PurchaseBatchListener implements ChannelAwareBatchMessageListener {

    private static final Logger log = LoggerFactory.getLogger(PurchaseBatchListener.class);

    private final BatchWriter writer;
    private final Counter poison;

    PurchaseBatchListener(BatchWriter writer, MeterRegistry registry) {
        this.writer = writer;
        this.poison = Counter.builder("purchases.poison")
                .description("Undecodable messages rejected to the parking queue").register(registry);
    }

    @Override
    public void onMessageBatch(List<Message> messages, Channel channel) {
        List<Delivery> deliveries = new ArrayList<>(messages.size());
        try {
            for (Message message : messages) {
                long tag = message.getMessageProperties().getDeliveryTag();
                try {
                    deliveries.add(new Delivery(tag, WireFormat.decode(message.getBody(), Purchase.class)));
                } catch (MalformedMessageException e) {
                    log.warn("Rejecting a poison message (id {}) to the parking queue: {}",
                            message.getMessageProperties().getMessageId(), e.getMessage());
                    poison.increment();
                    channel.basicReject(tag, false);
                }
            }
            if (deliveries.isEmpty()) {
                return;
            }
            Set<UUID> refused = writeOrRequeue(deliveries, channel);
            if (refused == null) {
                return;
            }
            long lastAccepted = -1;
            for (Delivery delivery : deliveries) {
                if (refused.contains(delivery.purchase().purchaseId())) {
                    channel.basicReject(delivery.tag(), false);
                } else {
                    lastAccepted = Math.max(lastAccepted, delivery.tag());
                }
            }
            if (lastAccepted >= 0) {
                // Every earlier tag on this channel is settled already (acked before, or rejected
                // just above), so one multiple-ack covers exactly this batch.
                channel.basicAck(lastAccepted, true);
            }
        } catch (IOException | RuntimeException e) {
            // The channel is gone (broker or connection failure): the broker requeues whatever
            // was not acknowledged, and the redelivery is stored idempotently.
            log.warn("Could not settle a batch of {} deliveries, the broker will redeliver them: {}",
                    messages.size(), e.toString());
        }
    }

    /** Stores the batch; on shutdown requeues it and returns null. */
    private Set<UUID> writeOrRequeue(List<Delivery> deliveries, Channel channel) throws IOException {
        try {
            return writer.write(deliveries.stream().map(Delivery::purchase).toList());
        } catch (InterruptedException e) {
            long lastTag = deliveries.stream().mapToLong(Delivery::tag).max().orElseThrow();
            channel.basicNack(lastTag, true, true);
            log.info("Stopping: requeued a batch of {} purchases that was waiting for the store", deliveries.size());
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private record Delivery(long tag, Purchase purchase) {
    }
}
