package com.supermarket.api.broker;

import com.supermarket.contract.Topology;
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
 * Readiness of the broker: DOWN while the connection is blocked, or when a real round trip (a
 * passive declare of the ingress exchange, which every topology has and purchase-api's user may
 * write to: RabbitMQ 4.3 refuses a passive declare to a user with no right on its target) fails
 * or takes longer than the health timeout, so a frozen link is caught too and the probe itself
 * never hangs. Thread-safe.
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
        try (Connection connection = connectionFactory.createConnection();
             var channel = connection.createChannel(false)) {
            channel.exchangeDeclarePassive(Topology.INGRESS_EXCHANGE);
        } catch (Exception e) {
            throw new IllegalStateException("no round trip to the broker (passive declare of " + Topology.INGRESS_EXCHANGE + "): "
                    + NestedExceptionUtils.getMostSpecificCause(e).getMessage(), e);
        }
        return System.nanoTime() - start;
    }

    @Override
    public void destroy() {
        checks.shutdownNow();
    }
}
