package com.supermarket.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;

class WireFormatTest {

    private final Purchase purchase = new Purchase(UUID.randomUUID(), 7, 7003, LocalDate.of(2021, 1, 1),
            List.of(new PurchaseItem(101, 2), new PurchaseItem(5, 1)), Instant.parse("2021-01-01T08:00:00Z"));

    @Test
    void purchaseRoundTrips() {
        assertThat(WireFormat.decode(WireFormat.encode(purchase), Purchase.class)).isEqualTo(purchase);
    }

    @Test
    void purchasesAreEncodedToTheDataBindersBytes() {
        SplittableRandom random = new SplittableRandom(42);
        List<Instant> instants = List.of(Instant.parse("2021-01-01T08:00:00Z"), Instant.parse("2026-11-24T01:02:03.450Z"),
                Instant.parse("1999-12-31T23:59:59.000000001Z"), Instant.ofEpochSecond(0, 123_456_000));
        List<LocalDate> dates = List.of(LocalDate.of(2021, 1, 1), LocalDate.of(9999, 12, 31), LocalDate.of(0, 2, 29),
                LocalDate.of(1, 10, 5));
        for (int n = 0; n < 200; n++) {
            List<PurchaseItem> items = new ArrayList<>();
            for (int i = random.nextInt(1, 8); i > 0; i--) {
                items.add(new PurchaseItem(random.nextInt(1, Integer.MAX_VALUE), random.nextInt(1, Integer.MAX_VALUE)));
            }
            Purchase any = new Purchase(new UUID(random.nextLong(), random.nextLong()), random.nextInt(1, Integer.MAX_VALUE),
                    random.nextInt(), dates.get(n % dates.size()), items, instants.get(n % instants.size()),
                    n % 2 == 0 ? null : "00-%016x%016x-%016x-0%d".formatted(random.nextLong(), random.nextLong(),
                            random.nextLong(), n % 4 / 2));
            assertThat(new String(WireFormat.encode(any), StandardCharsets.US_ASCII))
                    .isEqualTo(new String(WireFormat.encode((Object) any), StandardCharsets.UTF_8));
            assertThat(WireFormat.decode(WireFormat.encode(any), Purchase.class)).isEqualTo(any);
        }
    }

    @Test
    void datesTravelAsIsoStrings() {
        assertThat(new String(WireFormat.encode(purchase), StandardCharsets.UTF_8)).contains("\"date\":\"2021-01-01\"");
    }

    @Test
    void unknownFieldsAreIgnoredSoProducersCanEvolve() {
        String json = new String(WireFormat.encode(purchase), StandardCharsets.UTF_8).replaceFirst("\\{", "{\"channel\":\"till\",");
        assertThat(WireFormat.decode(json.getBytes(StandardCharsets.UTF_8), Purchase.class)).isEqualTo(purchase);
    }

    private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    @Test
    void aTracedPurchaseCarriesItsTraceparentAndAnUntracedOneNoField() {
        Purchase traced = purchase.withTraceparent(TRACEPARENT);
        assertThat(new String(WireFormat.encode(traced), StandardCharsets.US_ASCII)).endsWith(",\"traceparent\":\"" + TRACEPARENT + "\"}");
        assertThat(WireFormat.decode(WireFormat.encode(traced), Purchase.class).traceparent()).isEqualTo(TRACEPARENT);
        assertThat(new String(WireFormat.encode(purchase), StandardCharsets.US_ASCII)).doesNotContain("traceparent");
    }

    @Test
    void aPurchaseFromBeforeTheTraceparentDecodesUntraced() {
        String before = "{\"purchaseId\":\"" + purchase.purchaseId() + "\",\"storeId\":7,\"customerId\":7003,"
                + "\"date\":\"2021-01-01\",\"items\":[{\"itemId\":101,\"quantity\":2},{\"itemId\":5,\"quantity\":1}],"
                + "\"acceptedAt\":\"2021-01-01T08:00:00Z\"}";
        assertThat(WireFormat.decode(before.getBytes(StandardCharsets.US_ASCII), Purchase.class)).isEqualTo(purchase);
    }

    @Test
    void aMalformedTraceparentIsDroppedNotAPoisonPurchase() {
        for (String bad : List.of("", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", TRACEPARENT + "0",
                "00-0af7651916cd43dd8448eb211c80319c\"b7ad6b7169203331-01")) {
            String json = new String(WireFormat.encode(purchase), StandardCharsets.UTF_8)
                    .replaceFirst("\\}$", Matcher.quoteReplacement(",\"traceparent\":" + WireFormat.mapper().writeValueAsString(bad) + "}"));
            assertThat(WireFormat.decode(json.getBytes(StandardCharsets.UTF_8), Purchase.class)).as(bad).isEqualTo(purchase);
        }
    }

    @Test
    void garbageIsAMalformedMessage() {
        assertThatThrownBy(() -> WireFormat.decode("not json".getBytes(StandardCharsets.UTF_8), Purchase.class))
                .isInstanceOf(MalformedMessageException.class);
    }

    @Test
    void aPurchaseBreakingItsInvariantsIsAMalformedMessage() {
        String noItems = "{\"purchaseId\":\"" + UUID.randomUUID() + "\",\"storeId\":1,\"customerId\":1,"
                + "\"date\":\"2021-01-01\",\"items\":[],\"acceptedAt\":\"2021-01-01T08:00:00Z\"}";
        String missingStore = "{\"purchaseId\":\"" + UUID.randomUUID() + "\",\"customerId\":1,"
                + "\"date\":\"2021-01-01\",\"items\":[{\"itemId\":1,\"quantity\":1}],\"acceptedAt\":\"2021-01-01T08:00:00Z\"}";
        assertThatThrownBy(() -> WireFormat.decode(noItems.getBytes(StandardCharsets.UTF_8), Purchase.class))
                .isInstanceOf(MalformedMessageException.class);
        assertThatThrownBy(() -> WireFormat.decode(missingStore.getBytes(StandardCharsets.UTF_8), Purchase.class))
                .isInstanceOf(MalformedMessageException.class);
    }

    @Test
    void storeQueryRepliesRoundTrip() {
        StoreQueryReply reply = StoreQueryReply.ok(List.of(new StoreQueryReply.Ranked(3, 42)));
        assertThat(WireFormat.decode(WireFormat.encode(reply), StoreQueryReply.class)).isEqualTo(reply);
        StoreQuery query = new StoreQuery(StoreQuery.Kind.TOP_STORES_FOR_ITEM, 101, 5);
        assertThat(WireFormat.decode(WireFormat.encode(query), StoreQuery.class)).isEqualTo(query);
    }

    @Test
    void theChainQueriesRoundTripAndThePublicRankingsKeepTheirBytes() {
        for (StoreQuery query : List.of(StoreQuery.topItems(10), StoreQuery.itemsSoldAtLeast(7),
                StoreQuery.itemTotals(List.of(5, 3, 9)))) {
            assertThat(WireFormat.decode(WireFormat.encode(query), StoreQuery.class)).isEqualTo(query);
        }
        StoreQueryReply withPurchases = StoreQueryReply.ok(List.of(new StoreQueryReply.Ranked(3, 42)), 1234);
        assertThat(WireFormat.decode(WireFormat.encode(withPurchases), StoreQueryReply.class)).isEqualTo(withPurchases);

        // What a store-service or purchase-api that knows only the two public rankings sends and reads.
        assertThat(new String(WireFormat.encode(new StoreQuery(StoreQuery.Kind.TOP_ITEMS_AT_STORE, 7, 10)), StandardCharsets.UTF_8))
                .isEqualTo("{\"kind\":\"TOP_ITEMS_AT_STORE\",\"id\":7,\"limit\":10}");
        assertThat(new String(WireFormat.encode(StoreQueryReply.ok(List.of(new StoreQueryReply.Ranked(3, 42)))), StandardCharsets.UTF_8))
                .isEqualTo("{\"status\":\"OK\",\"entries\":[{\"id\":3,\"quantity\":42}]}");
        assertThat(WireFormat.decode("{\"kind\":\"TOP_STORES_FOR_ITEM\",\"id\":101,\"limit\":5}".getBytes(StandardCharsets.UTF_8),
                StoreQuery.class)).isEqualTo(new StoreQuery(StoreQuery.Kind.TOP_STORES_FOR_ITEM, 101, 5));
    }

    @Test
    void batchesOfStoreQueriesRoundTripAndAreNeverEmpty() {
        StoreQueries queries = new StoreQueries(List.of(new StoreQuery(StoreQuery.Kind.TOP_ITEMS_AT_STORE, 7, 10),
                new StoreQuery(StoreQuery.Kind.TOP_STORES_FOR_ITEM, 101, 5)));
        assertThat(WireFormat.decode(WireFormat.encode(queries), StoreQueries.class)).isEqualTo(queries);
        StoreQueries.Replies replies = new StoreQueries.Replies(List.of(StoreQueryReply.notFound("store 7 not found"),
                StoreQueryReply.ok(List.of(new StoreQueryReply.Ranked(3, 42)))));
        assertThat(WireFormat.decode(WireFormat.encode(replies), StoreQueries.Replies.class)).isEqualTo(replies);

        for (String malformed : List.of("{\"queries\":[]}", "{}", "{\"queries\":[null]}")) {
            assertThatThrownBy(() -> WireFormat.decode(malformed.getBytes(StandardCharsets.UTF_8), StoreQueries.class))
                    .as(malformed).isInstanceOf(MalformedMessageException.class);
        }
    }
}
