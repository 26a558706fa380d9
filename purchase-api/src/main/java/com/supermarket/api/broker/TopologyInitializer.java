package com.supermarket.api.broker;

import com.supermarket.broker.BrokerSetup;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Prepares the broker through the contract's {@link BrokerSetup} (the topology, and the sharding
 * and dead-letter policies unless the deployment provides them), retrying every
 * {@code platform.broker.retry-interval} until it succeeds instead of failing startup: the API
 * starts whatever the broker's state, each failed attempt is logged (a missing sharding plugin
 * with how to enable it), and readiness stays DOWN meanwhile through the {@code broker} check,
 * whose round trip needs the topology. Thread-safe: the attempts run on one daemon thread.
 */
@Component
class TopologyInitializer implements SmartLifecycle {

    private final BrokerSetup setup;
    private ScheduledExecutorService retrying;

    TopologyInitializer(BrokerSetup setup) {
        this.setup = setup;
    }

    @Override
    public synchronized void start() {
        retrying = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("broker-setup").daemon().factory());
        retrying.scheduleWithFixedDelay(() -> {
            if (setup.ensure()) {
                retrying.shutdown();
            }
        }, 0, setup.settings().retryInterval().toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void stop() {
        if (retrying != null) {
            retrying.shutdownNow();
            retrying = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return retrying != null;
    }
}
