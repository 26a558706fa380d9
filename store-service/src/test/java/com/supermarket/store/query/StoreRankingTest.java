package com.supermarket.store.query;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.StoreQueries;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.StoreQueryReply.Status;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class StoreRankingTest {

    private final StoreCounts counts = new StoreCounts(8, 100, 16);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StoreRanking ranking = new StoreRanking(counts, new StorePartition(0, 1), registry);

    private StoreQueryReply ask(Kind kind, int id, int limit) {
        return ask(ranking, new StoreQuery(kind, id, limit));
    }

    private static StoreQueryReply ask(StoreRanking ranking, StoreQuery query) {
        return ranking.answerAll(StoreQueries.MESSAGE_TYPE, WireFormat.encode(new StoreQueries(List.of(query)))).replies()
                .getFirst();
    }

    @Test
    void answersBothRankingsFromTheCounts() {
        counts.apply(new Purchase(UUID.randomUUID(), 3, 3000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(9, 2), new PurchaseItem(4, 2), new PurchaseItem(5, 1)), Instant.EPOCH));

        assertThat(ask(Kind.TOP_ITEMS_AT_STORE, 3, 10)).isEqualTo(StoreQueryReply.ok(
                List.of(new Ranked(4, 2), new Ranked(9, 2), new Ranked(5, 1))));
        assertThat(ask(Kind.TOP_STORES_FOR_ITEM, 9, 5)).isEqualTo(StoreQueryReply.ok(List.of(new Ranked(3, 2))));
        assertThat(registry.get("store.queries").tag("kind", "TOP_ITEMS_AT_STORE").tag("status", "OK").timer().count())
                .isEqualTo(1);
    }

    @Test
    void answersThePartitionsItemRankingsOverEveryStoreWithItsPurchases() {
        counts.apply(new Purchase(UUID.randomUUID(), 3, 3000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(9, 2), new PurchaseItem(4, 2), new PurchaseItem(5, 1)), Instant.EPOCH));
        counts.apply(new Purchase(UUID.randomUUID(), 6, 6000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(5, 4)), Instant.EPOCH));

        assertThat(ask(ranking, StoreQuery.topItems(2))).isEqualTo(StoreQueryReply.ok(
                List.of(new Ranked(5, 5), new Ranked(4, 2)), 2));
        assertThat(ask(ranking, StoreQuery.itemsSoldAtLeast(2))).isEqualTo(StoreQueryReply.ok(
                List.of(new Ranked(5, 5), new Ranked(4, 2), new Ranked(9, 2))));
        assertThat(ask(ranking, StoreQuery.itemTotals(List.of(9, 1, 5)))).isEqualTo(StoreQueryReply.ok(
                List.of(new Ranked(9, 2), new Ranked(1, 0), new Ranked(5, 5))));
        assertThat(registry.get("store.queries").tag("kind", "TOP_ITEMS").tag("status", "OK").timer().count()).isEqualTo(1);
    }

    @Test
    void theItemRankingsRefuseWhatTheyCannotAnswer() {
        assertThat(ask(ranking, StoreQuery.topItems(0)).status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(ask(ranking, StoreQuery.itemsSoldAtLeast(0)).message()).contains("atLeast must be at least 1");
        assertThat(ask(ranking, new StoreQuery(Kind.ITEMS_SOLD_AT_LEAST, 0, 0)).status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(ask(ranking, new StoreQuery(Kind.ITEM_TOTALS, 0, 0)).message()).contains("items must name");
        assertThat(ask(ranking, StoreQuery.itemTotals(List.of(3, 101))).message()).contains("item 101", "1..100");
    }

    @Test
    void aStoreOfAnotherPartitionIsRefusedNeverAnsweredEmpty() {
        StoreRanking secondOfTwo = new StoreRanking(counts, new StorePartition(1, 2), registry);

        StoreQueryReply reply = ask(secondOfTwo, new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 4, 10));

        assertThat(reply.status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(reply.message()).contains("store 4 belongs to store partition 0", "STORE_PARTITIONS");
        assertThat(ask(secondOfTwo, new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 3, 10)).status())
                .isEqualTo(Status.OK);
    }

    @Test
    void unknownStoresAndItemsAreNotFound() {
        assertThat(ask(Kind.TOP_ITEMS_AT_STORE, 9, 10).status()).isEqualTo(Status.NOT_FOUND);
        assertThat(ask(Kind.TOP_ITEMS_AT_STORE, 0, 10).message()).contains("store 0", "1..8");
        assertThat(ask(Kind.TOP_STORES_FOR_ITEM, 101, 5).message()).contains("item 101", "1..100");
    }

    @Test
    void limitsOutsideOneToTheMaximumAreBadRequests() {
        assertThat(ask(Kind.TOP_ITEMS_AT_STORE, 1, 0).status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(ask(Kind.TOP_STORES_FOR_ITEM, 1, StoreQuery.MAX_LIMIT + 1).message())
                .contains("between 1 and " + StoreQuery.MAX_LIMIT);
        assertThat(ask(Kind.TOP_STORES_FOR_ITEM, 1, StoreQuery.MAX_LIMIT).status()).isEqualTo(Status.OK);
    }

    @Test
    void malformedRequestsAreBadRequestsNotExceptions() {
        for (String body : new String[] {"", "{", "[]", "{\"queries\":[]}", "{\"queries\":[{\"kind\":\"TOP_ITEMS_AT_STORE\",\"id\":1}]}",
                "{\"queries\":[{\"kind\":\"NOPE\",\"id\":1,\"limit\":1}]}", "{\"queries\":[{\"id\":1,\"limit\":1}]}"}) {
            List<StoreQueryReply> replies = ranking.answerAll(StoreQueries.MESSAGE_TYPE, body.getBytes(StandardCharsets.UTF_8))
                    .replies();
            assertThat(replies).as(body).singleElement().satisfies(reply -> {
                assertThat(reply.status()).isEqualTo(Status.BAD_REQUEST);
                assertThat(reply.message()).startsWith("malformed queries");
            });
        }
        assertThat(registry.get("store.queries").tag("kind", "unknown").timer().count()).isEqualTo(7);
    }

    @Test
    void aRequestOfAnotherTypeIsABadRequest() {
        byte[] single = WireFormat.encode(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 1, 1));

        for (String type : new String[] {null, "store-query/1"}) {
            assertThat(ranking.answerAll(type, single).replies()).as(type).singleElement()
                    .extracting(StoreQueryReply::status).isEqualTo(Status.BAD_REQUEST);
        }
    }
}
