package com.supermarket.api.broker;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.stereotype.Component;

/**
 * Readiness of the broker: DOWN while the connection is blocked, or when a real round trip fails
 * or takes longer than the health timeout, so a frozen link is caught too and the probe itself
 * never hangs. The round trip opens and closes a channel of its own, which any user may: a
 * passive declare would need a right on its target (RabbitMQ 4.2.6 and 4.3 refuse it otherwise),
 * and purchase-api's least-privilege user has none on any queue. Thread-safe.
 */
@Component("broker")
class BrokerHealthIndicator implements HealthIndicator, DisposableBean {

    private final CachingConnectionFactory connectionFactory;
    private final BlockedConnectionTracker blocked;
    private final BrokerProperties properties;
    private final ExecutorService checks = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("broker-health-", 0).factory());

    BrokerHealthIndicator(CachingConnectionFactory connectionFactory, BlockedConnectionTracker blocked,
                          BrokerProperties properties) {
        this.connectionFactory = connectionFactory;
        this.blocked = blocked;
        this.properties = properties;
    }

    @Override
    public Health health() {
        if (blocked.isBlocked()) {
            return Health.down().withDetail("reason", "connection blocked by the broker: " + blocked.reason()).build();
        }
        CompletableFuture<Long> roundTrip = CompletableFuture.supplyAsync(this::roundTrip, checks);
        try {
            long nanos = roundTrip.get(properties.healthTimeout().toMillis(), TimeUnit.MILLISECONDS);
            return Health.up().withDetail("roundTripMs", TimeUnit.NANOSECONDS.toMillis(nanos)).build();
        } catch (TimeoutException e) {
            roundTrip.cancel(true);
            return Health.down().withDetail("reason", "no answer from the broker within "
                    + properties.healthTimeout().toMillis() + " ms").build();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Health.down().withDetail("reason", "interrupted").build();
        } catch (Exception e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            return Health.down().withDetail("reason", String.valueOf(cause.getMessage())).build();
        }
    }

    private long roundTrip() {
        long start = System.nanoTime();
        // Not a cached channel: channel.open and channel.close each wait for the broker's answer.
        try (Connection connection = connectionFactory.createConnection();
             var channel = connection.getDelegate().createChannel()) {
            if (channel == null) {
                throw new IllegalStateException("the connection has no channel left");
            }
        } catch (Exception e) {
            throw new IllegalStateException("no round trip to the broker (a channel opened and closed): "
                    + NestedExceptionUtils.getMostSpecificCause(e).getMessage(), e);
        }
        return System.nanoTime() - start;
    }

    @Override
    public void destroy() {
        checks.shutdownNow();
    }
}
