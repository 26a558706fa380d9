package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.RunParameters;
import com.supermarket.loadclient.result.RunResult;

class RetryingTillTest {

    @Test
    void retriesA503AfterItsRetryAfterWithTheSameIdempotencyKeyAndBody() throws Exception {
        // The first attempt of every purchase whose key ends in 1 is refused: 503, Retry-After: 1.
        Set<String> seen = ConcurrentHashMap.newKeySet();
        try (StubApi api = new StubApi(
                request -> request.idempotencyKey().endsWith("-1") && seen.add(request.idempotencyKey()) ? 503 : 201, "1")) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(2, 1, 3), null);

            List<StubApi.Request> requests = api.requests();
            Map<String, List<StubApi.Request>> byKey = requests.stream()
                    .collect(Collectors.groupingBy(StubApi.Request::idempotencyKey));
            assertThat(byKey).hasSize(2 * 9);
            assertThat(byKey).allSatisfy((key, attempts) -> {
                assertThat(key).matches("[0-9a-f]{16}-[12]-\\d+");
                assertThat(attempts).hasSize(key.endsWith("-1") ? 2 : 1);
                assertThat(attempts).extracting(StubApi.Request::path).containsOnly(attempts.getFirst().path());
                assertThat(attempts).extracting(StubApi.Request::body).containsOnly(attempts.getFirst().body());
            });
            byKey.values().stream().filter(attempts -> attempts.size() == 2).forEach(attempts -> assertThat(
                    attempts.get(1).arrivedNanos() - attempts.get(0).arrivedNanos())
                    .as("the retry waits for Retry-After").isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(1)));
            assertThat(result.successful()).isEqualTo(18);
            assertThat(result.failed()).isZero();
            assertThat(result.firstTryFailures()).isEqualTo(2);
            assertThat(result.retries()).isEqualTo(2);
            assertThat(result.failuresByStatus()).containsExactly(Map.entry("503", 2L));
            assertThat(result.purchases()).isEqualTo(new PurchaseOutcomes(18, 0, 0, null));
            // A retried purchase's latency covers its wait: the till's customer waited too.
            assertThat(result.postLatency().maxMs()).isGreaterThanOrEqualTo(1000);
        }
    }

    @Test
    void givesUpAfterTheAllowedRetriesAndCountsEachStageApart() throws Exception {
        try (StubApi api = new StubApi(request -> 503)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(2, 1, 2), null);

            assertThat(api.requests()).hasSize(2 * 9 * 3);
            assertThat(result.successful()).isZero();
            assertThat(result.failed()).isEqualTo(18);
            assertThat(result.firstTryFailures()).isEqualTo(18);
            assertThat(result.retries()).isEqualTo(36);
            assertThat(result.failuresByStatus()).containsExactly(Map.entry("503", 54L));
            assertThat(result.purchases()).as("a 503 may come after the purchase was published")
                    .isEqualTo(new PurchaseOutcomes(0, 18, 0, null));
        }
    }

    @Test
    void pausesRetriesWhileNothingHasSucceededForAWhile() throws Exception {
        // Five purchases succeed, then the server refuses everything: after a second without a
        // success the tills stop retrying, so the run ends instead of backing off for minutes.
        try (StubApi api = new StubApi(request -> request.index() < 5 ? 201 : 503)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(2, 10, 12), null, Duration.ofSeconds(1));

            assertThat(result.successful()).isEqualTo(5);
            assertThat(result.failed()).isEqualTo(2 * 90 - 5);
            // Each store retried its first failure for about a second (a few attempts), then no more.
            assertThat(result.retries()).isBetween(2L, 40L);
            assertThat(result.firstTryFailures()).isEqualTo(2 * 90 - 5);
        }
    }

    @Test
    void doesNotRetryARequestTheServerCalledWrong() throws Exception {
        try (StubApi api = new StubApi(request -> 400)) {
            RunResult result = Runs.run(api.baseUrl(), Runs.standard(2, 1, 5), null);

            assertThat(api.requests()).hasSize(18);
            assertThat(result.failed()).isEqualTo(18);
            assertThat(result.retries()).isZero();
            assertThat(result.purchases()).isEqualTo(new PurchaseOutcomes(0, 0, 18, null));
        }
    }

    @Test
    void doesNotRetryAServerThatWasNeverThere() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        RunResult result = Runs.run(URI.create("http://127.0.0.1:" + closedPort), Runs.standard(2, 1, 5), null);

        assertThat(result.failed()).isEqualTo(18);
        assertThat(result.retries()).isZero();
        assertThat(result.failuresByError()).containsExactly(Map.entry("ConnectException", 18L));
        assertThat(result.purchases()).as("a connection never opened carried nothing")
                .isEqualTo(new PurchaseOutcomes(0, 0, 18, null));
    }

    @Test
    void countsAPurchaseWhoseFirstAttemptTimedOutAsMaybeAcceptedWhateverItsRetriesWereAnswered() throws Exception {
        // Every purchase's first attempt gets no answer in time; the retry is refused with a 400.
        // The first attempt may have been accepted, so the purchase is maybe accepted, not refused.
        Set<String> seen = ConcurrentHashMap.newKeySet();
        CountDownLatch never = new CountDownLatch(1);
        try (StubApi api = new StubApi(request -> {
            if (seen.add(request.idempotencyKey())) {
                never.await(2, TimeUnit.SECONDS);
                return 201;
            }
            return 400;
        })) {
            RunParameters quickTimeout = new RunParameters(1, 1000, 100_000, 1, 5, "20210101", 0, 0, 0.2, 3, 0, 1);
            RunResult result = Runs.run(api.baseUrl(), quickTimeout, null);

            assertThat(result.failed()).isEqualTo(9);
            assertThat(result.purchases()).isEqualTo(new PurchaseOutcomes(0, 9, 0, null));
        } finally {
            never.countDown();
        }
    }

    @Test
    void retriesARequestThatTimedOut() throws Exception {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        CountDownLatch never = new CountDownLatch(1);
        try (StubApi api = new StubApi(request -> {
            if (request.idempotencyKey().endsWith("-1") && seen.add(request.idempotencyKey())) {
                never.await(2, TimeUnit.SECONDS);
            }
            return 201;
        })) {
            RunParameters quickTimeout = new RunParameters(2, 1000, 100_000, 1, 5, "20210101", 0, 0, 0.3, 3, 0, 1);
            RunResult result = Runs.run(api.baseUrl(), quickTimeout, null);

            assertThat(result.successful()).isEqualTo(18);
            assertThat(result.failed()).isZero();
            assertThat(result.firstTryFailures()).isEqualTo(2);
            assertThat(result.failuresByError()).containsExactly(Map.entry("HttpTimeoutException", 2L));
            assertThat(result.purchases()).isEqualTo(new PurchaseOutcomes(18, 0, 0, null));
        } finally {
            never.countDown();
        }
    }
}
