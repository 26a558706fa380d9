package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LoopLagTest {

    private static final long MS = 1_000_000L;

    private final LoopMetrics metrics = new LoopMetrics();
    private final AtomicLong now = new AtomicLong(100 * MS);
    private final List<Long> scheduled = new ArrayList<>();
    private final LoopLag lag = new LoopLag(metrics, now::get, (nanos, task) -> scheduled.add(nanos));

    @Test
    void recordsHowLateEachProbeStartedAndSchedulesTheNextOnePeriodLater() {
        lag.start();                    // due at 105 ms
        now.set(105 * MS + 250_000);
        lag.run();                      // 250 µs late; the next is due at 110.25 ms
        now.set(110 * MS + 250_000);
        lag.run();                      // on time

        Histogram recorded = metrics.intervalLag();
        assertThat(scheduled).containsExactly(5 * MS, 5 * MS, 5 * MS);
        assertThat(recorded.getTotalCount()).isEqualTo(2);
        assertThat(recorded.getCountAtValue(250)).isEqualTo(1);
        assertThat(recorded.getCountAtValue(0)).isEqualTo(1);
        assertThat(metrics.intervalLag().getTotalCount()).as("drained by the first read").isZero();
    }

    @Test
    void aStallCountsForTheProbesItSwallowedOnceNotAsABacklog() {
        lag.start();                    // due at 105 ms
        now.set(125 * MS);              // the loop was held up: 20 ms late
        lag.run();
        now.set(130 * MS);              // due at 130 ms: on time again, nothing owed
        lag.run();

        Histogram recorded = metrics.intervalLag();
        // 20 ms, and the 15, 10 and 5 ms the answers arriving during the stall waited; then 0.
        assertThat(recorded.getTotalCount()).isEqualTo(5);
        assertThat(recorded.getMaxValue()).isEqualTo(recorded.highestEquivalentValue(20_000));
        for (long ms = 5; ms <= 20; ms += 5) {
            assertThat(recorded.getCountAtValue(ms * 1000)).as("%d ms", ms).isEqualTo(1);
        }
        assertThat(recorded.getCountAtValue(0)).isEqualTo(1);
    }

    @Test
    void stopsQuietlyWhenTheLoopNoLongerTakesTasks() {
        LoopLag closing = new LoopLag(metrics, now::get, (nanos, task) -> {
            throw new RejectedExecutionException("shut down");
        });

        closing.start();
        closing.run();

        assertThat(metrics.intervalLag().getTotalCount()).isEqualTo(1);
    }
}
