package com.supermarket.purchases.ingest;

import com.supermarket.purchases.storage.PurchaseRepository;
import java.util.Locale;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * Health of the purchase store, part of the readiness group: DOWN while the consumers' writes
 * fail (they are holding their batches; the details say since when, whose fault and the last
 * error) or while the store does not answer a ping. Shown as {@code storage}. Thread-safe.
 */
@Component("storage")
class StorageHealthIndicator implements HealthIndicator {

    private final PurchaseRepository repository;
    private final StorageState state;

    StorageHealthIndicator(PurchaseRepository repository, StorageState state) {
        this.repository = repository;
        this.state = state;
    }

    @Override
    public Health health() {
        StorageState.Failure failure = state.failure();
        if (failure != null) {
            return Health.down().withDetail("failingSince", failure.since().toString())
                    .withDetail("fault", failure.fault().name().toLowerCase(Locale.ROOT))
                    .withDetail("reason", failure.reason()).build();
        }
        try {
            repository.ping();
            return Health.up().build();
        } catch (RuntimeException e) {
            return Health.down(e).build();
        }
    }
}
