package com.supermarket.store.counts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.store.counts.StoreCounts.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class StoreCountsTest {

    private static Purchase purchase(UUID id, int store, PurchaseItem... items) {
        return new Purchase(id, store, store * 1000, LocalDate.of(2021, 1, 1), List.of(items), Instant.EPOCH);
    }

    private static Purchase purchase(int store, PurchaseItem... items) {
        return purchase(UUID.randomUUID(), store, items);
    }

    @Test
    void aPurchaseDeliveredTwiceIsCountedOnce() {
        StoreCounts counts = new StoreCounts(4, 10, 16);
        Purchase purchase = purchase(2, new PurchaseItem(3, 2), new PurchaseItem(5, 1));

        assertThat(counts.apply(purchase)).isEqualTo(Outcome.APPLIED);
        assertThat(counts.apply(purchase)).isEqualTo(Outcome.DUPLICATE);

        assertThat(counts.count(2, 3)).isEqualTo(2);
        assertThat(counts.count(2, 5)).isEqualTo(1);
    }

    @Test
    void aPurchaseOlderThanTheWindowIsNoLongerRecognised() {
        StoreCounts counts = new StoreCounts(1, 1, 2);
        Purchase first = purchase(1, new PurchaseItem(1, 1));
        counts.apply(first);
        counts.apply(purchase(1, new PurchaseItem(1, 1)));
        counts.apply(purchase(1, new PurchaseItem(1, 1)));

        assertThat(counts.apply(first)).as("pushed out by two newer ids").isEqualTo(Outcome.APPLIED);
    }

    @Test
    void anIdForgottenBeforeTheDedupHorizonIsCountedAndOneForgottenAfterItIsNot() {
        Instant[] now = {Instant.parse("2026-01-01T00:00:00Z")};
        StoreCounts counts = new StoreCounts(2, 1, 2, Duration.ofMinutes(10), () -> now[0]);
        counts.apply(purchase(1, new PurchaseItem(1, 1)));
        counts.apply(purchase(1, new PurchaseItem(1, 1)));
        now[0] = now[0].plus(Duration.ofMinutes(9));
        counts.apply(purchase(1, new PurchaseItem(1, 1)));
        assertThat(counts.forgottenEarly()).as("the first id, remembered 9 minutes of 10").isEqualTo(1);

        now[0] = now[0].plus(Duration.ofMinutes(2));
        counts.apply(purchase(1, new PurchaseItem(1, 1)));
        assertThat(counts.forgottenEarly()).as("the second id, remembered 11 minutes").isEqualTo(1);
        counts.apply(purchase(2, new PurchaseItem(1, 1)));
        assertThat(counts.forgottenEarly()).as("another store's window is not full").isEqualTo(1);
    }

    @Test
    void aLimitBelowOneIsRefusedWhetherOrNotTheStoreSold() {
        StoreCounts counts = new StoreCounts(4, 10, 16);
        counts.apply(purchase(1, new PurchaseItem(1, 1)));

        assertThatIllegalArgumentException().isThrownBy(() -> counts.topItemsAtStore(1, 0));
        assertThatIllegalArgumentException().isThrownBy(() -> counts.topItemsAtStore(2, 0));
        assertThatIllegalArgumentException().isThrownBy(() -> counts.topStoresForItem(1, 0));
    }

    @Test
    void outOfRangeStoresAndItemsChangeNothing() {
        StoreCounts counts = new StoreCounts(4, 10, 16);

        assertThatIllegalArgumentException().isThrownBy(() -> counts.apply(purchase(5, new PurchaseItem(1, 1))));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> counts.apply(purchase(1, new PurchaseItem(1, 1), new PurchaseItem(11, 1))));

        assertThat(counts.count(1, 1)).isZero();
        assertThatIllegalArgumentException().isThrownBy(() -> counts.topItemsAtStore(0, 10));
        assertThatIllegalArgumentException().isThrownBy(() -> counts.topStoresForItem(11, 5));
    }

    @Test
    void aKnownStoreOrItemWithoutSalesHasAnEmptyRanking() {
        StoreCounts counts = new StoreCounts(4, 10, 16);
        counts.apply(purchase(1, new PurchaseItem(1, 1)));

        assertThat(counts.topItemsAtStore(2, 10)).isEmpty();
        assertThat(counts.topStoresForItem(2, 5)).isEmpty();
    }

    @Test
    void rankingsMatchABruteForceOracleOnRandomDataWithTies() {
        Random random = new Random(42);
        int stores = 40;
        int items = 300;
        StoreCounts counts = new StoreCounts(stores, items, 64);
        long[][] oracle = new long[stores][items];
        for (int i = 0; i < 5_000; i++) {
            int store = 1 + random.nextInt(stores);
            List<PurchaseItem> lines = new ArrayList<>();
            for (int line = 1 + random.nextInt(5); line > 0; line--) {
                // A skewed, narrow item range and small quantities give many equal counts.
                int item = 1 + Math.min(random.nextInt(items), random.nextInt(items));
                int quantity = 1 + random.nextInt(2);
                lines.add(new PurchaseItem(item, quantity));
                oracle[store - 1][item - 1] += quantity;
            }
            counts.apply(purchase(store, lines.toArray(PurchaseItem[]::new)));
        }

        // Restored from a snapshot, a store's leading items are chosen afresh from its counts.
        StoreCounts restored = new StoreCounts(stores, items, 64);
        counts.snapshotTo(restored::restoreStore);
        for (int store = 1; store <= stores; store++) {
            // Up to LEADERS the kept leading items answer, beyond it a scan of the row.
            for (int limit : new int[] {1, 10, StoreCounts.LEADERS, StoreCounts.LEADERS + 1, 400}) {
                List<Ranked> expected = TopKTest.bruteForce(oracle[store - 1], limit);
                assertThat(counts.topItemsAtStore(store, limit)).as("store %d limit %d", store, limit).isEqualTo(expected);
                assertThat(restored.topItemsAtStore(store, limit)).as("restored store %d limit %d", store, limit)
                        .isEqualTo(expected);
            }
        }
        for (int item = 1; item <= items; item++) {
            long[] byStore = new long[stores];
            for (int store = 0; store < stores; store++) {
                byStore[store] = oracle[store][item - 1];
            }
            for (int limit : new int[] {1, 5, 50}) {
                assertThat(counts.topStoresForItem(item, limit)).as("item %d limit %d", item, limit)
                        .isEqualTo(TopKTest.bruteForce(byStore, limit));
            }
        }
        long[] overAllStores = new long[items];
        for (long[] store : oracle) {
            for (int item = 0; item < items; item++) {
                overAllStores[item] += store[item];
            }
        }
        for (StoreCounts answering : List.of(counts, restored)) {
            for (int limit : new int[] {1, 10, 299, 300, 1000}) {
                assertThat(answering.topItems(limit)).as("top %d items", limit).isEqualTo(TopKTest.bruteForce(overAllStores, limit));
            }
            for (int item = 1; item <= items; item++) {
                assertThat(answering.itemTotal(item)).as("item %d", item).isEqualTo(overAllStores[item - 1]);
            }
            for (long atLeast : new long[] {1, 40, 41, 1_000_000}) {
                List<Ranked> expected = TopKTest.bruteForce(overAllStores, items).stream()
                        .filter(ranked -> ranked.quantity() >= atLeast).toList();
                assertThat(answering.itemsSoldAtLeast(atLeast)).as("at least %d", atLeast).isEqualTo(expected);
            }
        }
        assertThat(counts.itemsSoldAtLeast(41)).as("a threshold within the ranking").isNotEmpty()
                .hasSizeLessThan(counts.itemsSoldAtLeast(1).size());
        // The rankings must actually contain ties, also at the edge of the kept leading items,
        // and stores with more items than are kept, for this test to mean something.
        List<Long> ranked = counts.topItemsAtStore(1, 400).stream().map(Ranked::quantity).toList();
        assertThat(ranked).hasSizeGreaterThan(StoreCounts.LEADERS + 1);
        assertThat(new java.util.HashSet<>(ranked)).hasSizeLessThan(ranked.size());
        long tiedAtTheEdge = java.util.stream.IntStream.rangeClosed(1, stores)
                .mapToObj(store -> counts.topItemsAtStore(store, StoreCounts.LEADERS + 1))
                .filter(top -> top.size() > StoreCounts.LEADERS
                        && top.get(StoreCounts.LEADERS).quantity() == top.get(StoreCounts.LEADERS - 1).quantity())
                .count();
        assertThat(tiedAtTheEdge).isPositive();
    }

    @Test
    void concurrentApplicationsAndRedeliveriesGiveExactTotals() throws Exception {
        int stores = 8;
        int items = 50;
        int threads = 8;
        int purchasesPerThread = 20_000;
        // Every purchase is applied by two threads, as a redelivery racing the original; the window
        // holds every purchase, since here the two deliveries can be far apart.
        StoreCounts counts = new StoreCounts(stores, items, threads / 2 * purchasesPerThread);
        List<Purchase> purchases = new ArrayList<>();
        Random random = new Random(3);
        long[][] expected = new long[stores][items];
        for (int i = 0; i < threads / 2 * purchasesPerThread; i++) {
            int store = 1 + random.nextInt(stores);
            int item = 1 + random.nextInt(items);
            int other = 1 + random.nextInt(items);
            purchases.add(purchase(store, new PurchaseItem(item, 1), new PurchaseItem(other, 2)));
            expected[store - 1][item - 1] += 1;
            expected[store - 1][other - 1] += 2;
        }
        Map<Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int half = t % 2;
                int slice = t / 2;
                done.add(pool.submit(() -> {
                    start.await();
                    // Threads 2s and 2s+1 apply the same slice, one forwards and one backwards.
                    for (int i = 0; i < purchasesPerThread; i++) {
                        int index = slice * purchasesPerThread + (half == 0 ? i : purchasesPerThread - 1 - i);
                        Outcome outcome = counts.apply(purchases.get(index));
                        outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(outcomes.get(Outcome.APPLIED)).hasValue(purchases.size());
        assertThat(outcomes.get(Outcome.DUPLICATE)).hasValue(purchases.size());
        for (int item = 1; item <= items; item++) {
            long total = 0;
            for (int store = 1; store <= stores; store++) {
                assertThat(counts.count(store, item)).as("store %d item %d", store, item)
                        .isEqualTo(expected[store - 1][item - 1]);
                total += expected[store - 1][item - 1];
            }
            assertThat(counts.itemTotal(item)).as("item %d over every store", item).isEqualTo(total);
        }
    }

    @Test
    void anItemsTotalAddsWhatItsSaturatedCellsKept() {
        StoreCounts counts = new StoreCounts(2, 3, 8);
        counts.apply(purchase(1, new PurchaseItem(2, Integer.MAX_VALUE - 1)));
        counts.apply(purchase(1, new PurchaseItem(2, 5)));
        counts.apply(purchase(2, new PurchaseItem(2, 7)));

        assertThat(counts.count(1, 2)).isEqualTo(Integer.MAX_VALUE);
        assertThat(counts.itemTotal(2)).isEqualTo(Integer.MAX_VALUE + 7L);
        assertThat(counts.topItems(1)).containsExactly(new Ranked(2, Integer.MAX_VALUE + 7L));
    }

    @Test
    void aStoreRestoredOverItsCountsLeavesTheItemsTotalsEqualToTheRows() {
        StoreCounts counts = new StoreCounts(2, 4, 8);
        counts.apply(purchase(1, new PurchaseItem(1, 5), new PurchaseItem(2, 1)));
        counts.apply(purchase(2, new PurchaseItem(1, 2)));

        counts.restoreStore(1, new int[] {0, 3, 4}, 1, List.of());

        assertThat(counts.topItems(10)).containsExactly(new Ranked(3, 4), new Ranked(2, 3), new Ranked(1, 2));
        assertThatIllegalArgumentException().isThrownBy(() -> counts.itemsSoldAtLeast(0));
    }

    @Test
    void theFullSizeTakesTheDocumentedMemory() {
        // 1,024 rows of 100,000 ints plus 1,024 dedup windows of 1,024 ids: 435 MB (store-service README).
        assertThat(StoreCounts.bytesWhenFull(1024, 100_000, 1024)).isBetween(430_000_000L, 440_000_000L);
    }

    @Test
    void aSnapshotRestoresCountsAndTheDedupWindow() {
        StoreCounts original = new StoreCounts(3, 5, 8);
        Purchase seen = purchase(2, new PurchaseItem(4, 3));
        original.apply(seen);
        original.apply(purchase(3, new PurchaseItem(1, 1)));

        StoreCounts restored = new StoreCounts(3, 5, 8);
        Map<Integer, int[]> saved = new HashMap<>();
        original.apply(seen);
        original.snapshotTo((store, itemCounts, purchases, recent) -> {
            saved.put(store, itemCounts);
            restored.restoreStore(store, itemCounts, purchases, recent);
        });

        assertThat(saved).containsOnlyKeys(2, 3);
        assertThat(restored.purchases()).as("distinct purchases, the redelivery not counted").isEqualTo(2);
        assertThat(restored.count(2, 4)).isEqualTo(3);
        assertThat(restored.topStoresForItem(1, 5)).containsExactly(new Ranked(3, 1));
        assertThat(restored.apply(seen)).isEqualTo(Outcome.DUPLICATE);
    }
}
