package com.supermarket.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class PurchaseBatchTest {

    private static Purchase purchase(int store) {
        return new Purchase(UUID.randomUUID(), store, 7000 + store, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 2), new PurchaseItem(5, 1)), Instant.parse("2021-01-01T08:00:00Z"));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void framedPurchasesDecodeInOrder() {
        List<Purchase> purchases = List.of(purchase(1), purchase(2), purchase(3));
        byte[] body = PurchaseBatch.frame(purchases.stream().map(WireFormat::encode).toList());

        PurchaseBatch.Decoded decoded = PurchaseBatch.decode(PurchaseBatch.MESSAGE_TYPE, body);

        assertThat(decoded.purchases()).containsExactlyElementsOf(purchases);
        assertThat(decoded.poison()).isEmpty();
    }

    @Test
    void theFrameIsTheRecordsJsonEncoding() {
        List<Purchase> purchases = List.of(purchase(4), purchase(5));
        byte[] framed = PurchaseBatch.frame(purchases.stream().map(WireFormat::encode).toList());

        assertThat(WireFormat.decode(framed, PurchaseBatch.class)).isEqualTo(new PurchaseBatch(1, purchases));
    }

    @Test
    void aMessageWithoutTheBatchTypeIsMalformedWhole() {
        byte[] single = WireFormat.encode(purchase(9));

        assertThatThrownBy(() -> PurchaseBatch.decode(null, single)).isInstanceOf(MalformedMessageException.class);
        assertThatThrownBy(() -> PurchaseBatch.decode("", single)).isInstanceOf(MalformedMessageException.class);
        assertThatThrownBy(() -> PurchaseBatch.decode("purchase/1", PurchaseBatch.frame(List.of(single))))
                .isInstanceOf(MalformedMessageException.class);
    }

    @Test
    void aPoisonPurchaseIsIsolatedFromItsNeighbours() {
        Purchase good1 = purchase(1);
        Purchase good2 = purchase(2);
        String noItems = "{\"purchaseId\":\"" + UUID.randomUUID() + "\",\"storeId\":1,\"customerId\":1,"
                + "\"date\":\"2021-01-01\",\"items\":[],\"acceptedAt\":\"2021-01-01T08:00:00Z\"}";
        byte[] body = PurchaseBatch.frame(List.of(WireFormat.encode(good1), utf8(noItems), utf8("42"),
                WireFormat.encode(good2)));

        PurchaseBatch.Decoded decoded = PurchaseBatch.decode(PurchaseBatch.MESSAGE_TYPE, body);

        assertThat(decoded.purchases()).containsExactly(good1, good2);
        assertThat(decoded.poison()).hasSize(2);
        assertThat(new String(decoded.poison().get(0).json(), StandardCharsets.UTF_8)).contains("\"items\":[]");
        assertThat(decoded.poison().get(0).reason()).contains("at least one item");
        assertThat(new String(decoded.poison().get(1).json(), StandardCharsets.UTF_8)).isEqualTo("42");
    }

    @Test
    void aBrokenEnvelopeMakesTheWholeMessagePoison() {
        assertThatThrownBy(() -> PurchaseBatch.decode(PurchaseBatch.MESSAGE_TYPE, utf8("{\"version\":1,\"purchases\":[")))
                .isInstanceOf(MalformedMessageException.class);
        assertThatThrownBy(() -> PurchaseBatch.decode(PurchaseBatch.MESSAGE_TYPE, utf8("{\"version\":2,\"purchases\":[{}]}")))
                .isInstanceOf(MalformedMessageException.class).hasMessageContaining("version");
        assertThatThrownBy(() -> PurchaseBatch.decode(PurchaseBatch.MESSAGE_TYPE, utf8("{\"version\":1,\"purchases\":[]}")))
                .isInstanceOf(MalformedMessageException.class).hasMessageContaining("without purchases");
        assertThatThrownBy(() -> PurchaseBatch.decode("purchase-batch/9", utf8("{}")))
                .isInstanceOf(MalformedMessageException.class).hasMessageContaining("unknown message type");
    }
}
