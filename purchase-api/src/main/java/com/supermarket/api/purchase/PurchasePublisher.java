package com.supermarket.api.purchase;

import com.supermarket.api.broker.BlockedConnectionTracker;
import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;

/**
 * Publishes a purchase so that both sharded exchanges hold it, and returns only once the broker
 * confirmed every publish as routed and stored. Anything else (blocked connection, no
 * connection, no free channel, nack, return, no confirm in time) is a
 * {@link PublishRefusedException}.
 *
 * <p>Thread-safe: many request threads publish at once; the template checks a channel out of
 * the connection factory's pool per publish and the confirms are correlated per message.
 */
@Component
class PurchasePublisher {

    private final RabbitTemplate template;
    private final PublishProperties properties;
    private final BlockedConnectionTracker blocked;
    private final Timer confirmLatency;

    PurchasePublisher(@Qualifier("publishTemplate") RabbitTemplate template, PublishProperties properties,
                      BlockedConnectionTracker blocked, MeterRegistry registry) {
        this.template = template;
        this.properties = properties;
        this.blocked = blocked;
        this.confirmLatency = Timer.builder("purchases.confirm.latency")
                .description("From the first publish of a purchase until the broker confirmed all of them")
                .tag("mode", properties.mode().name())
                .publishPercentileHistogram()
                .register(registry);
    }

    void publish(Purchase purchase) {
        if (blocked.isBlocked()) {
            // Refuse fast: a publish on a blocked connection would only wait out the confirm timeout.
            throw new PublishRefusedException(Reason.BLOCKED,
                    "the broker is blocking publishers (" + blocked.reason() + "); retry later", null);
        }
        Message message = toMessage(purchase);
        long start = System.nanoTime();
        List<CorrelationData> pending = new ArrayList<>(2);
        for (String exchange : properties.mode().exchanges()) {
            CorrelationData correlation = new CorrelationData(purchase.purchaseId() + "@" + exchange);
            send(exchange, purchase.routingKey(), message, correlation);
            pending.add(correlation);
        }
        long deadline = start + properties.confirmTimeout().toNanos();
        for (CorrelationData correlation : pending) {
            awaitConfirm(correlation, deadline);
        }
        confirmLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }

    private Message toMessage(Purchase purchase) {
        MessageProperties props = new MessageProperties();
        props.setContentType(WireFormat.CONTENT_TYPE);
        props.setMessageId(purchase.purchaseId().toString());
        props.setDeliveryMode(properties.persistent() ? MessageDeliveryMode.PERSISTENT : MessageDeliveryMode.NON_PERSISTENT);
        return new Message(WireFormat.encode(purchase), props);
    }

    private void send(String exchange, String routingKey, Message message, CorrelationData correlation) {
        try {
            template.send(exchange, routingKey, message, correlation);
        } catch (AmqpTimeoutException e) {
            throw new PublishRefusedException(Reason.CHANNELS_EXHAUSTED,
                    "the API is overloaded (no free broker channel); retry later", e);
        } catch (AmqpException e) {
            throw new PublishRefusedException(Reason.UNREACHABLE, "the broker is unreachable; retry later", e);
        }
    }

    private void awaitConfirm(CorrelationData correlation, long deadline) {
        CorrelationData.Confirm confirm;
        try {
            confirm = correlation.getFuture().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new PublishRefusedException(Reason.CONFIRM_TIMEOUT,
                    "the broker did not confirm the purchase in " + properties.confirmTimeout().toMillis()
                            + " ms; it was not accepted, retry later", e);
        } catch (ExecutionException e) {
            throw new PublishRefusedException(Reason.UNREACHABLE, "the broker connection failed; retry later", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PublishRefusedException(Reason.INTERRUPTED, "the request was interrupted; retry later", e);
        }
        // A return arrives before its confirm, so it is visible here.
        if (correlation.getReturned() != null) {
            throw new PublishRefusedException(Reason.UNROUTABLE,
                    "the broker could not route the purchase (" + correlation.getReturned().getReplyText()
                            + "); the topology is not ready, retry later", null);
        }
        if (!confirm.ack()) {
            throw new PublishRefusedException(Reason.NACK,
                    "the broker refused the purchase (" + confirm.reason() + "); retry later", null);
        }
    }
}
