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
        lag.start();                    // due at 101 ms
        now.set(101 * MS + 250_000);
        lag.run();                      // 250 µs late; the next is due at 102.25 ms
        now.set(102 * MS + 250_000);
        lag.run();                      // on time

        Histogram recorded = metrics.intervalLag();
        assertThat(scheduled).containsExactly(MS, MS, MS);
        assertThat(recorded.getTotalCount()).isEqualTo(2);
        assertThat(recorded.getCountAtValue(250)).isEqualTo(1);
        assertThat(recorded.getCountAtValue(0)).isEqualTo(1);
        assertThat(metrics.intervalLag().getTotalCount()).as("drained by the first read").isZero();
    }

    @Test
    void aStallCountsForTheProbesItSwallowedOnceNotAsABacklog() {
        lag.start();                    // due at 101 ms
        now.set(111 * MS);              // the loop was held up: 10 ms late
        lag.run();
        now.set(112 * MS);              // due at 112 ms: on time again, nothing owed
        lag.run();

        Histogram recorded = metrics.intervalLag();
        // 10 ms, and the 9, 8 ... 1 ms the answers arriving during the stall waited; then 0.
        assertThat(recorded.getTotalCount()).isEqualTo(11);
        assertThat(recorded.getMaxValue()).isEqualTo(recorded.highestEquivalentValue(10_000));
        for (long ms = 1; ms <= 10; ms++) {
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
