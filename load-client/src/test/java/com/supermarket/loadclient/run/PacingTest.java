package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.RunResult;

/** The paced mode's late starts, and more than one request in flight per store. */
class PacingTest {

    /** A cold JVM's first connections take tens of ms to set up: more than the 50 ms pace below. */
    @BeforeAll
    static void warmUp() throws Exception {
        try (StubApi api = new StubApi(request -> 201)) {
            Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(4, 20, 0, 0, 0, 2), null, false), new RunStop());
        }
    }

    // One store, 9 POSTs at 10 requests/s: one every 100 ms, the last due at 800 ms. The first
    // answer takes 1.5 s.
    private static StubApi slowFirstAnswer() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        return new StubApi(request -> {
            if (request.index() == 0) {
                never.await(1500, TimeUnit.MILLISECONDS);
            }
            return 201;
        });
    }

    @Test
    void countsTheSendsThatCouldNotStartOnTimeForWantOfAFreeConnection() throws Exception {
        try (StubApi api = slowFirstAnswer()) {
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(1, 1, 0, 10, 0, 1), null, false),
                    new RunStop());

            // The next eight were due at 100..800 ms, while the one connection waited for the first answer.
            assertThat(result.pacing().intendedSends()).isEqualTo(9);
            assertThat(result.pacing().lateStarts()).isEqualTo(8);
            assertThat(result.pacing().maxLateMs()).isBetween(1300.0, 1700.0);
            assertThat(result.pacing().meanLateMs()).isPositive().isLessThan(result.pacing().maxLateMs());
            assertThat(result.successful()).as("late, not dropped").isEqualTo(9);
        }
    }

    @Test
    void aSecondConnectionKeepsTheScheduleWhileOneAnswerIsSlow() throws Exception {
        try (StubApi api = slowFirstAnswer()) {
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(1, 1, 0, 10, 0, 2), null, false),
                    new RunStop());

            // The eight others go on time on the other connection (a hiccup of the shared machine
            // longer than the 100 ms pace may make one or two late).
            assertThat(result.pacing().intendedSends()).isEqualTo(9);
            assertThat(result.pacing().lateStarts()).isLessThanOrEqualTo(2);
            assertThat(result.successful()).isEqualTo(9);
            assertThat(result.postLatency().medianMs()).isLessThan(500.0);
            assertThat(result.postLatency().maxMs()).isGreaterThanOrEqualTo(1500.0);
            assertThat(result.parameters().maxInFlightPerStore()).isEqualTo(2);
        }
    }

    @Test
    void aClosedLoopStoreKeepsAsManyRequestsInFlightAsAllowedEachPurchaseOnce() throws Exception {
        Map<Integer, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> mostInFlight = new ConcurrentHashMap<>();
        try (StubApi api = new StubApi(request -> {
            int store = Integer.parseInt(request.path().split("/")[2]);
            int now = inFlight.computeIfAbsent(store, s -> new AtomicInteger()).incrementAndGet();
            mostInFlight.computeIfAbsent(store, s -> new AtomicInteger()).accumulateAndGet(now, Math::max);
            Thread.sleep(20);
            inFlight.get(store).decrementAndGet();
            return 201;
        })) {
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(4, 4, 0, 0, 0, 3), null, false),
                    new RunStop());

            assertThat(mostInFlight).hasSize(4).allSatisfy((store, most) -> assertThat(most.get()).isEqualTo(3));
            assertThat(result.successful()).isEqualTo(4 * 36);
            // Every purchase of a store has its own Idempotency-Key, numbered 1..36.
            Map<String, List<Integer>> keysByStore = api.requests().stream().map(StubApi.Request::idempotencyKey)
                    .collect(Collectors.groupingBy(key -> key.split("-")[1],
                            Collectors.mapping(key -> Integer.parseInt(key.split("-")[2]), Collectors.toList())));
            assertThat(keysByStore).hasSize(4).allSatisfy((store, numbers) ->
                    assertThat(numbers).containsExactlyInAnyOrderElementsOf(
                            java.util.stream.IntStream.rangeClosed(1, 36).boxed().toList()));
            assertThat(result.pacing().intendedSends()).as("a closed loop has no schedule").isZero();
        }
    }
}
