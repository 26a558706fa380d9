package com.supermarket.store.counts;

import com.supermarket.contract.IdRanges;
import com.supermarket.contract.StorePartition;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.InstantSource;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class CountsConfiguration {

    private static final Logger log = LoggerFactory.getLogger(CountsConfiguration.class);

    @Bean
    StoreCounts storeCounts(IdRanges platform, CountsProperties counts, StorePartition partition,
                            MeterRegistry registry) {
        StoreCounts storeCounts = new StoreCounts(platform.maxStores(), platform.maxItemId(), counts.dedupWindowPerStore(),
                counts.dedupHorizon(), InstantSource.system());
        Gauge.builder("store.purchases.counted", storeCounts, StoreCounts::purchases)
                .description("Distinct purchases in the counts, including those recovered at startup").register(registry);
        FunctionCounter.builder("store.dedup.forgotten.early", storeCounts, StoreCounts::forgottenEarly)
                .description("Purchase ids forgotten sooner than the dedup horizon (a store sold more than its dedup"
                        + " window within it): a retry of one of them would be counted again")
                .register(registry);
        // Only this partition's stores ever get a row.
        int owned = (int) IntStream.rangeClosed(1, platform.maxStores()).filter(partition::owns).count();
        long fullSize = StoreCounts.bytesWhenFull(owned, platform.maxItemId(), counts.dedupWindowPerStore());
        long heap = Runtime.getRuntime().maxMemory();
        // Rows are allocated as stores sell, so a small heap fails only hours into a run: say so now.
        if (fullSize > heap * 0.8) {
            log.warn("The counts need {} MiB once every store has sold, but the maximum heap is {} MiB: "
                    + "raise it (e.g. -Xmx{}m or -XX:MaxRAMPercentage=75 in a container)",
                    fullSize >> 20, heap >> 20, (fullSize * 3 / 2) >> 20);
        } else {
            log.info("Counts for {} stores x {} items: {} MiB when every store has sold (max heap {} MiB)",
                    owned, platform.maxItemId(), fullSize >> 20, heap >> 20);
        }
        return storeCounts;
    }
}
