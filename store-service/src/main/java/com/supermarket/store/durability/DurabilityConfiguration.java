package com.supermarket.store.durability;

import com.supermarket.broker.BrokerSettings;
import com.supermarket.contract.StorePartition;
import com.supermarket.store.counts.StoreCounts;
import com.supermarket.store.partition.StoreCopy;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Recovers the counts of this copy of its store partition (from its own state directory, rebuilt
 * from another copy when it is empty) before anything can consume or query them
 * ({@link CountsRecovery}). The directory is claimed while the context starts, so a directory of
 * another partition or copy stops the start at once.
 */
@Configuration(proxyBeanMethods = false)
class DurabilityConfiguration {

    @Bean
    CountsRecovery countsRecovery(DurabilityProperties properties, RebuildProperties rebuild, BrokerSettings broker,
                                  StoreCounts counts, StorePartition partition, StoreCopy copy, MeterRegistry registry,
                                  ApplicationEventPublisher events) throws IOException {
        PeerRebuild peers = null;
        if (properties.enabled()) {
            new StateDirectory(properties.stateDir().toAbsolutePath()).claim(partition, copy.index());
            if (copy.copies() > 1) {
                if (rebuild.peers().isEmpty()) {
                    throw new IllegalStateException("store.rebuild.peers (STORE_REBUILD_PEERS) must name the other copies of this "
                            + "partition when STORE_COPIES is " + copy.copies() + ": a copy whose state directory is empty "
                            + "rebuilds it from one of them, and never starts from zero while another copy may hold counts");
                }
                peers = new PeerRebuild(rebuild.peersOf(partition.index()), rebuild.timeout());
            }
        }
        return new CountsRecovery(properties, counts, registry, peers, broker.retryInterval(), events);
    }

    /**
     * Readiness of the counts ({@code recoveredCounts}): DOWN until they are recovered (or rebuilt
     * from another copy), with the stage and the reason in the details.
     */
    @Bean
    HealthIndicator recoveredCounts(CountsRecovery recovery) {
        return () -> {
            Health.Builder health = recovery.isReady() ? Health.up() : Health.down();
            health.withDetail("stage", recovery.stage());
            if (recovery.problem() != null) {
                health.withDetail("problem", recovery.problem());
            }
            return health.build();
        };
    }
}
