package com.supermarket.api.items;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class TopStoresTest {

    @Test
    void mergesThePartitionsListsMostFirstTiesByLowerStoreId() {
        StoreQueryReply even = StoreQueryReply.ok(List.of(new Ranked(4, 9), new Ranked(2, 5), new Ranked(6, 1)));
        StoreQueryReply odd = StoreQueryReply.ok(List.of(new Ranked(3, 9), new Ranked(1, 5)));

        assertThat(TopStores.merge(List.of(even, odd), 4)).isEqualTo(StoreQueryReply.ok(
                List.of(new Ranked(3, 9), new Ranked(4, 9), new Ranked(1, 5), new Ranked(2, 5))));
        assertThat(TopStores.merge(List.of(StoreQueryReply.ok(List.of()), odd), 10).entries()).hasSize(2);
    }

    @Test
    void equalsTheTopOfEveryStoreWhenEachPartitionGivesItsOwnTop() {
        Random random = new Random(5);
        int partitions = 4;
        int limit = 5;
        List<Ranked> every = new ArrayList<>();
        for (int store = 1; store <= 64; store++) {
            every.add(new Ranked(store, random.nextInt(6)));
        }
        Comparator<Ranked> mostFirst = Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id);
        List<StoreQueryReply> replies = new ArrayList<>();
        for (int partition = 0; partition < partitions; partition++) {
            int owner = partition;
            replies.add(StoreQueryReply.ok(every.stream().filter(ranked -> ranked.id() % partitions == owner)
                    .sorted(mostFirst).limit(limit).toList()));
        }

        assertThat(TopStores.merge(replies, limit).entries()).isEqualTo(every.stream().sorted(mostFirst).limit(limit).toList());
    }

    @Test
    void aReplyThatIsNotOkStandsForAll() {
        StoreQueryReply notFound = StoreQueryReply.notFound("item 0 not found");

        assertThat(TopStores.merge(List.of(StoreQueryReply.ok(List.of(new Ranked(1, 1))), notFound), 5)).isEqualTo(notFound);
    }

    @Test
    void oneFailedPartitionFailsTheAnswerWithoutWaitingForTheOthers() {
        CompletableFuture<StoreQueryReply> answered = CompletableFuture.completedFuture(StoreQueryReply.ok(List.of()));
        CompletableFuture<StoreQueryReply> silent = new CompletableFuture<>();
        CompletableFuture<StoreQueryReply> failing = new CompletableFuture<>();

        CompletableFuture<StoreQueryReply> merged = TopStores.merged(List.of(answered, silent, failing), 5);
        StoreQueryFailedException failure = new StoreQueryFailedException(504, "store-service partition 2 of 3 did not answer");
        failing.completeExceptionally(failure);

        assertThat(merged).isCompletedExceptionally();
        assertThat(merged.exceptionNow()).isSameAs(failure);
    }

    @Test
    void answersOnceEveryPartitionHasAnswered() {
        CompletableFuture<StoreQueryReply> first = new CompletableFuture<>();
        CompletableFuture<StoreQueryReply> second = new CompletableFuture<>();
        CompletableFuture<StoreQueryReply> merged = TopStores.merged(List.of(first, second), 5);

        first.complete(StoreQueryReply.ok(List.of(new Ranked(2, 3))));
        assertThat(merged).isNotDone();
        second.complete(StoreQueryReply.ok(List.of(new Ranked(1, 3))));

        assertThat(merged.join().entries()).containsExactly(new Ranked(1, 3), new Ranked(2, 3));
    }
}
