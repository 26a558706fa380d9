package com.supermarket.api.items;

import com.supermarket.broker.BrokerSettings;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Opens the store queries' connection and reply consumer at startup ({@link StoreQueryClient#open}),
 * before the web server takes requests, rather than on the first GET: on a loaded machine opening
 * them took longer than the reply timeout, and that GET failed. If the broker cannot be reached
 * then, they are tried again every {@code BROKER_RETRY_INTERVAL} in the background. The health
 * component {@code storeQueries}, part of readiness, is DOWN until they were opened once, then UP
 * for good: the template reopens what it loses by itself, and the {@code broker} component watches
 * the broker. Thread-safe.
 */
@Component("storeQueries")
class StoreQueryOpening implements SmartLifecycle, HealthIndicator {

    private static final Logger log = LoggerFactory.getLogger(StoreQueryOpening.class);

    private final StoreQueryClient client;
    private final long retryMillis;
    /** Null once opened; until then why not. */
    private volatile String notOpen = "the store queries' connection has not been opened yet";
    private boolean warned;
    private boolean running;
    private Thread opener;

    StoreQueryOpening(StoreQueryClient client, BrokerSettings broker) {
        this.client = client;
        this.retryMillis = broker.retryInterval().toMillis();
    }

    /** Opens once at once (an unreachable broker holds the start at most the connection timeout), then again in the background until it succeeds. */
    @Override
    public synchronized void start() {
        running = true;
        if (tryOpen()) {
            return;
        }
        opener = Thread.ofPlatform().name("store-query-opener").daemon().start(() -> {
            try {
                do {
                    TimeUnit.MILLISECONDS.sleep(retryMillis);
                } while (!tryOpen());
            } catch (InterruptedException stopped) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private boolean tryOpen() {
        try {
            client.open();
        } catch (RuntimeException e) {
            if (!warned) {
                warned = true;
                log.warn("Cannot open the store queries' connection yet, trying again every {} ms: {}", retryMillis, e.getMessage());
            }
            notOpen = "the store queries' connection cannot be opened: " + e.getMessage();
            return false;
        }
        notOpen = null;
        log.info("The store queries' connection and reply consumer are open");
        return true;
    }

    @Override
    public Health health() {
        String problem = notOpen;
        return problem == null ? Health.up().build() : Health.down().withDetail("reason", problem).build();
    }

    @Override
    public synchronized void stop() {
        running = false;
        if (opener != null) {
            opener.interrupt();
            opener = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running;
    }

    /** Before the web server's start (and after its stop): {@code DEFAULT_PHASE - 2048} in Spring Boot. */
    @Override
    public int getPhase() {
        return DEFAULT_PHASE - 4096;
    }
}
