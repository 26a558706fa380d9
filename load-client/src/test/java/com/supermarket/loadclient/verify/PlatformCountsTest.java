package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;

import org.junit.jupiter.api.Test;

class PlatformCountsTest {

    @Test
    void sumsEverySeriesOfTheMetricAndNoOtherMetricWithTheSamePrefix() {
        String scrape = """
                # HELP store_purchases_counted Distinct purchases in the counts
                # TYPE store_purchases_counted gauge
                store_purchases_counted{application="store-service",instance="a"} 1200.0
                store_purchases_counted{application="store-service",instance="b"} 34.0
                store_purchases_counted_extra 999.0
                purchases_stored_total 7.0
                """;

        assertThat(PlatformCounts.sum(scrape, "store_purchases_counted")).isEqualTo(OptionalLong.of(1234));
        assertThat(PlatformCounts.sum(scrape, "purchases_stored_total")).isEqualTo(OptionalLong.of(7));
        assertThat(PlatformCounts.sum(scrape, "absent_metric")).isEmpty();
    }

    @Test
    void readsTheCountOfTheLookupEndpoint() {
        assertThat(PlatformCounts.count("{\"count\":42}")).isEqualTo(OptionalLong.of(42));
        assertThat(PlatformCounts.count("{\"message\":\"the purchase store is unavailable\"}")).isEmpty();
        assertThat(PlatformCounts.count("<html>")).isEmpty();
    }
}
