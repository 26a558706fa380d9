package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;

/** A run stopped early ({@link RunStop}, as SIGINT and SIGTERM do): what it reports. */
class StopTest {

    @Test
    void aStoppedRunStartsNothingMoreWaitsOutTheGraceAndCountsWhatStayedUnanswered() throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch released = new CountDownLatch(1);
        AtomicInteger afterStop = new AtomicInteger();
        RunStop stop = new RunStop();
        // Store 1's fifth purchase is never answered within the grace; the others are answered at once.
        try (StubApi api = new StubApi(request -> {
            if (stop.requested()) {
                afterStop.incrementAndGet();
            }
            if (request.path().startsWith("/purchase/1/") && request.idempotencyKey().endsWith("-1-5")) {
                stuck.countDown();
                released.await(LoadRun.STOP_GRACE.toSeconds() + 10, TimeUnit.SECONDS);
            }
            return 201;
        })) {
            Thread stopper = Thread.ofPlatform().start(() -> {
                try {
                    stuck.await();
                    Thread.sleep(200);
                    stop.request("SIGTERM");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long start = System.nanoTime();
            // 4 stores, closed loop, 900 purchases each: far from done when the stop comes.
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(4, 100, 0, 0, 0, 1), null, false),
                    stop);
            double seconds = (System.nanoTime() - start) / 1e9;
            released.countDown();
            stopper.join();

            assertThat(result.interrupted()).isTrue();
            assertThat(result.unansweredAtStop()).isEqualTo(1);
            assertThat(result.purchases().maybeAccepted()).as("the unanswered POST may have been stored").isEqualTo(1);
            assertThat(result.successful()).isPositive().isLessThan(4 * 900);
            assertThat(result.failed()).isZero();
            // The other stores sent next to nothing after the stop: what was in flight, or on its way.
            assertThat(afterStop.get()).isLessThanOrEqualTo(6);
            assertThat(seconds).isBetween((double) LoadRun.STOP_GRACE.toSeconds(), LoadRun.STOP_GRACE.toSeconds() + 5.0);
            assertThat(result.phases()).filteredOn(phase -> phase.name().equals("east"))
                    .extracting(PhaseStart::atSeconds).allSatisfy(at -> assertThat(at).isNotNegative());
            assertThat(RunCommand.exitStatus(result)).isEqualTo(RunCommand.EXIT_INTERRUPTED);
        }
    }

    @Test
    void aStopEndsARequestWaitingForItsRetryAsFailedAtOnce() throws Exception {
        RunStop stop = new RunStop();
        try (StubApi api = new StubApi(request -> {
            stop.request("SIGINT");
            return 503;
        }, "30")) {
            // Retry-After: 30 s, so the retry would wait; the stop must not.
            RunParameters retrying = new RunParameters(1, 1000, 100_000, 1, 5, "20210101", 0, 0, 10, 3, 0, 1);
            long start = System.nanoTime();
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), retrying, null, false), stop);

            assertThat((System.nanoTime() - start) / 1e9).isLessThan(5.0);
            assertThat(result.interrupted()).isTrue();
            assertThat(result.failed()).isEqualTo(1);
            assertThat(result.retries()).isZero();
            assertThat(result.purchases().maybeAccepted()).isEqualTo(1);
            assertThat(api.requests()).hasSize(1);
        }
    }
}
