package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;

/** {@code --duration}: a run of a set time, the time zones scaled into it. */
class TimedRunTest {

    // 14 simulated hours in 2.8 s: an hour is 0.2 s. East (stores 1-2) is open 0-1.8 s, central
    // (3-4) 0.6-2.4 s, west (5-8) 1.0-2.8 s.
    private static final double DURATION = 2.8;
    private static final double HOUR = DURATION / 14;

    @Test
    void aClosedLoopRunLastsItsDurationWithThePhasesOpenedAndClosedByTheClock() throws Exception {
        try (StubApi api = new StubApi(request -> {
            Thread.sleep(5);
            return 201;
        })) {
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(8, 1, 0, 0, DURATION, 1), null, false),
                    new RunStop());

            assertThat(result.parameters().durationSeconds()).isEqualTo(DURATION);
            assertThat(result.wallTimeSeconds()).isBetween(DURATION, DURATION + 0.5);
            Map<String, Double> opened = result.phases().stream()
                    .collect(Collectors.toMap(PhaseStart::name, PhaseStart::atSeconds));
            assertThat(opened.get("east")).isCloseTo(0, within(0.05));
            assertThat(opened.get("central")).isCloseTo(3 * HOUR, within(0.1));
            assertThat(opened.get("west")).isCloseTo(5 * HOUR, within(0.1));
            // Each store's requests lie within its nine simulated hours (and the last answer after).
            long start = api.requests().stream().mapToLong(StubApi.Request::arrivedNanos).min().orElseThrow();
            Map<Integer, List<Double>> arrivals = api.requests().stream().collect(Collectors.groupingBy(
                    request -> Integer.parseInt(request.path().split("/")[2]),
                    Collectors.mapping(request -> (request.arrivedNanos() - start) / 1e9, Collectors.toList())));
            assertThat(arrivals).hasSize(8);
            arrivals.forEach((store, times) -> {
                double opens = store <= 2 ? 0 : store <= 4 ? 3 * HOUR : 5 * HOUR;
                assertThat(times).as("store " + store).allSatisfy(at -> assertThat(at)
                        .isBetween(opens - 0.05, opens + 9 * HOUR + 0.1));
                assertThat(times.size()).as("store " + store + " kept sending").isGreaterThan(20);
            });
            assertThat(result.successful()).isEqualTo(api.requests().size());
            assertThat(result.failed()).isZero();
        }
    }

    @Test
    void aPacedRunSendsItsRateForEachStoresShareOfTheDurationGetsIncluded() throws Exception {
        try (StubApi api = new StubApi(request -> request.method().equals("POST") ? 201 : 200)) {
            // 400 requests/s over 8 stores: 50/s each, open 9/14 of 2.8 s = 1.8 s: 90 each, 720 in all.
            RunResult result = Runs.quietly(
                    Runs.settings(api.baseUrl(), Runs.profile(8, 1, 0.1, 400, DURATION, 1), null, false), new RunStop());

            assertThat(result.requests()).isBetween(700L, 730L);
            long posts = result.latencyOf(RequestType.POST).count();
            long gets = result.latencyOf(RequestType.GET_STORE).count() + result.latencyOf(RequestType.GET_TOP10).count();
            assertThat(gets).as("a GET per ten POSTs, no cap in a timed run").isBetween(posts / 10 - 8, posts / 10 + 8);
            assertThat(result.pacing().intendedSends()).isEqualTo(result.requests());
            assertThat(result.wallTimeSeconds()).isBetween(DURATION - 0.1, DURATION + 0.5);
        }
    }

    @Test
    void everyStoreSendsForTheWholeDurationWhenAllOpenAtOnce() throws Exception {
        try (StubApi api = new StubApi(request -> 201)) {
            // 8 stores at 50/s each for 2.8 s: 1,120.
            RunResult result = Runs.quietly(
                    Runs.settings(api.baseUrl(), Runs.profile(8, 1, 0, 400, DURATION, 1), null, true), new RunStop());

            assertThat(result.requests()).isBetween(1_100L, 1_130L);
            assertThat(result.phases()).extracting(PhaseStart::atSeconds)
                    .allSatisfy(at -> assertThat(at).isCloseTo(0, within(0.05)));
        }
    }
}
