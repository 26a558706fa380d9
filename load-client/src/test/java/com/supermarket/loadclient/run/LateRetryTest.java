package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.RunResult;

class LateRetryTest {

    @Test
    void aChosenStoreSendsItsFirstAcceptedPurchaseAgainAfterTheCountOfFurtherPurchasesSendingExtraOnesToReachIt()
            throws Exception {
        try (StubApi api = new StubApi(request -> 201)) {
            // 2 stores x 18 purchases; store 1 re-sends its first after 30 more, so it sends 12 extra.
            RunResult result = Runs.withLateRetries(api.baseUrl(), Runs.standard(2, 2), LateRetryPlan.of(1, "30"));

            List<StubApi.Request> store1 = api.requests().stream()
                    .filter(request -> request.path().startsWith("/purchase/1/")).toList();
            Map<String, List<Integer>> positionsByKey = store1.stream().collect(Collectors.groupingBy(
                    StubApi.Request::idempotencyKey, Collectors.mapping(store1::indexOf, Collectors.toList())));
            List<String> sentTwice = positionsByKey.entrySet().stream().filter(entry -> entry.getValue().size() == 2)
                    .map(Map.Entry::getKey).toList();
            assertThat(sentTwice).hasSize(1);
            List<StubApi.Request> both = store1.stream()
                    .filter(request -> request.idempotencyKey().equals(sentTwice.getFirst())).toList();
            assertThat(both.get(1).path()).isEqualTo(both.get(0).path());
            assertThat(both.get(1).body()).isEqualTo(both.get(0).body());
            assertThat(both.get(0)).isSameAs(store1.getFirst());
            assertThat(store1.indexOf(both.get(1))).as("30 further purchases between").isEqualTo(31);
            assertThat(store1).hasSize(32);
            assertThat(api.requests()).filteredOn(request -> request.path().startsWith("/purchase/2/")).hasSize(18);

            assertThat(result.purchases()).as("the re-send is the same purchase: 31 + 18 purchases")
                    .isEqualTo(new PurchaseOutcomes(49, 0, 0, new PurchaseOutcomes.LateRetries(1, 1, 1, 0)));
            assertThat(result.postLatency().count()).isEqualTo(49);
            assertThat(result.successful()).isEqualTo(49);
        }
    }

    @Test
    void aTimedReSendWaitsForItsTimeEvenAfterTheStoreFinishedItsProfile() throws Exception {
        try (StubApi api = new StubApi(request -> 201)) {
            RunResult result = Runs.withLateRetries(api.baseUrl(), Runs.standard(2, 1), LateRetryPlan.of(2, "1s"));

            Map<String, List<StubApi.Request>> byKey = api.requests().stream()
                    .collect(Collectors.groupingBy(StubApi.Request::idempotencyKey));
            List<List<StubApi.Request>> sentTwice = byKey.values().stream().filter(attempts -> attempts.size() == 2).toList();
            assertThat(sentTwice).hasSize(2).allSatisfy(attempts -> {
                assertThat(attempts.get(1).body()).isEqualTo(attempts.get(0).body());
                assertThat(attempts.get(1).arrivedNanos() - attempts.get(0).arrivedNanos())
                        .isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(1));
            });
            assertThat(api.requests()).hasSize(2 * 9 + 2);
            assertThat(result.purchases()).isEqualTo(new PurchaseOutcomes(18, 0, 0, new PurchaseOutcomes.LateRetries(2, 2, 2, 0)));
        }
    }

    @Test
    void aReSendThatFailsForGoodIsNeitherAPurchaseNorARequestOfTheRun() throws Exception {
        // Every purchase is accepted the first time; every re-send of a known key is refused.
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (StubApi api = new StubApi(request -> seen.add(request.idempotencyKey()) ? 201 : 503)) {
            RunResult result = Runs.withLateRetries(api.baseUrl(), Runs.standard(2, 1, 1), LateRetryPlan.of(1, "3"));

            assertThat(result.purchases()).isEqualTo(new PurchaseOutcomes(18, 0, 0, new PurchaseOutcomes.LateRetries(1, 1, 0, 1)));
            assertThat(result.failed()).isZero();
            assertThat(result.firstTryFailures()).isZero();
        }
    }

    @Test
    void readsTheDelayAsACountOfPurchasesOrATime() {
        assertThat(LateRetryPlan.of(2, "1,100")).isEqualTo(new LateRetryPlan(2, 1100, null));
        assertThat(LateRetryPlan.of(2, "5m")).isEqualTo(new LateRetryPlan(2, 0, Duration.ofMinutes(5)));
        assertThat(LateRetryPlan.of(1, "500ms").afterTime()).isEqualTo(Duration.ofMillis(500));
        assertThatThrownBy(() -> LateRetryPlan.of(1, "soon")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LateRetryPlan.of(1, "0")).isInstanceOf(IllegalArgumentException.class);
    }
}
