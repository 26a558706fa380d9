package com.supermarket.store.durability;

import com.supermarket.contract.StorePartition;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Recovers the counts of this store partition (from its own state directory) before anything can consume or query them: the acknowledger bean is
 * created (snapshot loaded, log replayed) while the context starts, before the listener
 * containers and the web server start, so no query is answered from half-loaded counts and
 * readiness cannot be UP before recovery ends.
 */
@Configuration(proxyBeanMethods = false)
class DurabilityConfiguration {

    private static final Logger log = LoggerFactory.getLogger(DurabilityConfiguration.class);

    @Bean
    Acknowledger acknowledger(DurabilityProperties properties, StoreCounts counts, StorePartition partition,
                              MeterRegistry registry) throws IOException {
        if (!properties.enabled()) {
            log.warn("Durability is off (store.durability.enabled=false): messages are acknowledged as soon as they "
                    + "are counted in memory, and every count is lost on restart");
            return (channel, deliveryTag, counted) -> channel.basicAck(deliveryTag, false);
        }
        new StateDirectory(properties.stateDir().toAbsolutePath()).claim(partition);
        return WriteAheadAcknowledger.recover(properties, counts, registry);
    }
}
