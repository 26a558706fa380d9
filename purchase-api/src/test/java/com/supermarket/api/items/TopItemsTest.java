package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TopItemsTest {

    private static final Comparator<Ranked> MOST_FIRST =
            Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id);

    /** Partitions answering from their own totals as store-service does, counting what each kind was asked. */
    private static final class Totals implements TopItems.Partitions {
        final long[][] sold; // [partition][item - 1]
        final long[] purchases;
        final Map<Kind, AtomicInteger> asked = new ConcurrentHashMap<>();

        Totals(long[][] sold, long... purchases) {
            this.sold = sold;
            this.purchases = purchases;
        }

        @Override
        public CompletableFuture<StoreQueryReply> ask(StoreQuery query, int partition) {
            asked.computeIfAbsent(query.kind(), kind -> new AtomicInteger()).incrementAndGet();
            long[] items = sold[partition];
            List<Ranked> all = new ArrayList<>();
            for (int item = 1; item <= items.length; item++) {
                all.add(new Ranked(item, items[item - 1]));
            }
            StoreQueryReply reply = switch (query.kind()) {
                case TOP_ITEMS -> StoreQueryReply.ok(all.stream().filter(r -> r.quantity() > 0).sorted(MOST_FIRST)
                        .limit(query.limit()).toList(), purchases[partition]);
                case ITEMS_SOLD_AT_LEAST -> StoreQueryReply.ok(all.stream().filter(r -> r.quantity() >= query.atLeast())
                        .sorted(MOST_FIRST).toList());
                case ITEM_TOTALS -> StoreQueryReply.ok(query.items().stream().map(item -> all.get(item - 1)).toList());
                default -> throw new AssertionError(query);
            };
            // Answered later, from another thread, as a lane answers.
            return CompletableFuture.supplyAsync(() -> reply);
        }

        int asked(Kind kind) {
            return asked.getOrDefault(kind, new AtomicInteger()).get();
        }

        List<Ranked> bruteForce(int limit) {
            List<Ranked> chain = new ArrayList<>();
            for (int item = 1; item <= sold[0].length; item++) {
                long total = 0;
                for (long[] partition : sold) {
                    total += partition[item - 1];
                }
                if (total > 0) {
                    chain.add(new Ranked(item, total));
                }
            }
            return chain.stream().sorted(MOST_FIRST).limit(limit).toList();
        }
    }

    @Test
    void anItemInNoPartitionsTopListCanBeTheChainsFirst() {
        // Item 3 is third at both partitions, yet sold 18 in all; items 1, 2, 4, 5 sold 10 each.
        Totals partitions = new Totals(new long[][] {{10, 10, 9, 0, 0}, {0, 0, 9, 10, 10}}, 7, 8);
        List<Ranked> naive = TopStores.merge(List.of(StoreQueryReply.ok(List.of(new Ranked(1, 10), new Ranked(2, 10))),
                StoreQueryReply.ok(List.of(new Ranked(4, 10), new Ranked(5, 10)))), 2).entries();

        StoreQueryReply answer = TopItems.merged(2, 2, partitions).join();

        assertThat(naive).as("merging the top lists").doesNotContain(new Ranked(3, 18));
        assertThat(answer).isEqualTo(StoreQueryReply.ok(List.of(new Ranked(3, 18), new Ranked(1, 10)), 15));
    }

    @Test
    void equalsABruteForceCountOverEveryPartitionOnRandomFlatAndSkewedSales() {
        Random random = new Random(11);
        int withAllThreeRounds = 0;
        for (int round = 0; round < 400; round++) {
            int partitions = 1 + random.nextInt(5);
            int items = 1 + random.nextInt(60);
            boolean skewed = random.nextBoolean();
            long[][] sold = new long[partitions][items];
            for (long[] partition : sold) {
                for (int item = 0; item < items; item++) {
                    // Flat small counts give many ties; skewed ones a few leaders.
                    partition[item] = random.nextInt(4) == 0 ? 0 : skewed ? random.nextInt(1 + 2000 / (item + 1)) : random.nextInt(5);
                }
            }
            Totals totals = new Totals(sold, new long[partitions]);
            int limit = 1 + random.nextInt(items + 3);

            StoreQueryReply answer = TopItems.merged(partitions, limit, totals).join();

            assertThat(answer.entries()).as("round %d: %d partitions, %d items, limit %d", round, partitions, items, limit)
                    .isEqualTo(totals.bruteForce(limit));
            withAllThreeRounds += totals.asked(Kind.ITEM_TOTALS) > 0 ? 1 : 0;
        }
        assertThat(withAllThreeRounds).as("rounds that needed the exact totals of round 3").isGreaterThan(40);
    }

    @Test
    void onePartitionOrListsShorterThanTheLimitEverywhereAreOneRound() {
        Totals one = new Totals(new long[][] {{3, 0, 5}}, 4);
        assertThat(TopItems.merged(1, 2, one).join()).isEqualTo(StoreQueryReply.ok(List.of(new Ranked(3, 5), new Ranked(1, 3)), 4));

        Totals short2 = new Totals(new long[][] {{3, 0, 5, 0}, {1, 2, 0, 0}}, 4, 6);
        assertThat(TopItems.merged(2, 10, short2).join()).isEqualTo(StoreQueryReply.ok(
                List.of(new Ranked(3, 5), new Ranked(1, 4), new Ranked(2, 2)), 10));
        assertThat(short2.asked(Kind.TOP_ITEMS)).isEqualTo(2);
        assertThat(short2.asked(Kind.ITEMS_SOLD_AT_LEAST)).isZero();
    }

    @Test
    void aReplyThatIsNotOkStandsForAll() {
        StoreQueryReply refused = StoreQueryReply.badRequest("limit must be between 1 and 1000: 0");
        TopItems.Partitions refusing = (query, partition) -> CompletableFuture.completedFuture(partition == 1 ? refused
                : StoreQueryReply.ok(List.of(new Ranked(1, 1)), 1));

        assertThat(TopItems.merged(2, 1, refusing).join()).isEqualTo(refused);
    }

    @Test
    void aFailedPartitionFailsTheAnswerWithItsOwnFailureInAnyRound() {
        StoreQueryFailedException failure = new StoreQueryFailedException(504, "store-service partition 1 of 2 did not answer");
        for (Kind failing : List.of(Kind.TOP_ITEMS, Kind.ITEMS_SOLD_AT_LEAST, Kind.ITEM_TOTALS)) {
            Totals totals = new Totals(new long[][] {{10, 10, 9, 0, 0}, {0, 0, 9, 10, 10}}, 1, 1);
            TopItems.Partitions ask = (query, partition) -> query.kind() == failing && partition == 1
                    ? CompletableFuture.failedFuture(failure) : totals.ask(query, partition);

            CompletableFuture<StoreQueryReply> answer = TopItems.merged(2, 2, ask);

            assertThat(answer).as("failing at %s", failing).failsWithin(java.time.Duration.ofSeconds(5));
            assertThat(answer.exceptionNow()).as("failing at %s", failing).isSameAs(failure);
        }
    }
}
