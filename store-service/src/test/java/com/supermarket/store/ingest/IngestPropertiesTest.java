package com.supermarket.store.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class IngestPropertiesTest {

    /** 1 consumer x prefetch 3 x 100 purchases = 300 purchases unacknowledged per shard queue. */
    private final IngestProperties ingest = new IngestProperties(1, 3, 100);

    @Test
    void theDedupWindowMustHoldEveryPurchaseUnacknowledgedOverEveryShardQueueConsumed() {
        assertThat(ingest.dedupProblem(12, 4096)).as("12 x 300 = 3,600").isNull();
        assertThat(ingest.dedupProblem(13, 3900)).as("13 x 300 = 3,900: exactly").isNull();
        assertThat(ingest.dedupProblem(14, 4096))
                .contains("dedup-window-per-store (4096)", "14 shard queue(s)", "= 4200", "lower the prefetch");
    }
}
