package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.api.PlatformProperties;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.util.unit.DataSize;

class PurchaseFingerprintTest {

    private static final String BODY = "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1},{\"ItemID\":\"5\",\"numberOfItems:\":2}]}";

    private final PurchaseRequestParser parser = new PurchaseRequestParser(new PlatformProperties(1024, 100000),
            new PurchaseLimits(100, DataSize.ofKilobytes(64)));

    private String fingerprint(String store, String customer, String date, String body) {
        return PurchaseFingerprint.of(parser.parse(store, customer, date, body.getBytes(StandardCharsets.UTF_8), "till-1/42"));
    }

    @Test
    void isThirtyTwoHexDigitsAndTheSameForTheSamePurchase() {
        String first = fingerprint("7", "7001", "20210101", BODY);

        assertThat(first).matches("[0-9a-f]{32}");
        assertThat(fingerprint("7", "7001", "20210101", BODY)).isEqualTo(first);
    }

    /** Whatever the parser normalises is the same purchase: key order, whitespace, spellings, types, extras. */
    @ParameterizedTest
    @ValueSource(strings = {
            "{\"items\":[{\"numberOfItems:\":1,\"ItemID\":\"101\"},{\"numberOfItems:\":2,\"ItemID\":\"5\"}]}",
            "  {\n \"items\" : [ { \"ItemID\" : \"101\" , \"numberOfItems:\" : 1 } ,\n{\"ItemID\":\"5\",\"numberOfItems:\":2} ] }\n",
            "{\"items\":[{\"ItemID\":101,\"numberOfItems\":\"1\"},{\"ItemID\":5,\"numberOfItems\":2,\"numberOfItems:\":2}]}",
            "{\"note\":\"retry\",\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1,\"x\":[]},{\"ItemID\":\"5\",\"numberOfItems:\":2}]}",
            "{\"items\":[{\"ItemID\":\"5\",\"numberOfItems:\":2},{\"ItemID\":\"101\",\"numberOfItems:\":1}]}"})
    void theSamePurchaseWrittenDifferentlyHasTheSameFingerprint(String body) {
        assertThat(fingerprint("7", "7001", "20210101", body)).isEqualTo(fingerprint("7", "7001", "20210101", BODY));
    }

    @Test
    void everyPartOfThePurchaseCounts() {
        String first = fingerprint("7", "7001", "20210101", BODY);

        assertThat(fingerprint("8", "7001", "20210101", BODY)).as("store").isNotEqualTo(first);
        assertThat(fingerprint("7", "7002", "20210101", BODY)).as("customer").isNotEqualTo(first);
        assertThat(fingerprint("7", "7001", "20210102", BODY)).as("date").isNotEqualTo(first);
        assertThat(fingerprint("7", "7001", "20210101", "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1},"
                + "{\"ItemID\":\"5\",\"numberOfItems:\":3}]}")).as("a quantity").isNotEqualTo(first);
        assertThat(fingerprint("7", "7001", "20210101", "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1},"
                + "{\"ItemID\":\"6\",\"numberOfItems:\":2}]}")).as("an item").isNotEqualTo(first);
        assertThat(fingerprint("7", "7001", "20210101", "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1}]}"))
                .as("a line less").isNotEqualTo(first);
        assertThat(fingerprint("7", "7001", "20210101", "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1},"
                + "{\"ItemID\":\"5\",\"numberOfItems:\":1},{\"ItemID\":\"5\",\"numberOfItems:\":1}]}"))
                .as("a line split in two").isNotEqualTo(first);
    }

    @Test
    void leavesOutTheIdAndTheTimeOfAcceptance() {
        List<PurchaseItem> items = List.of(new PurchaseItem(101, 1));
        Purchase one = new Purchase(UUID.randomUUID(), 7, 7001, LocalDate.of(2021, 1, 1), items, Instant.EPOCH);
        Purchase other = new Purchase(UUID.randomUUID(), 7, 7001, LocalDate.of(2021, 1, 1), items, Instant.now());

        assertThat(PurchaseFingerprint.of(other)).isEqualTo(PurchaseFingerprint.of(one));
    }

    @Test
    void onlyPurchasesWithAnIdempotencyKeyAreKeyed() {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

        assertThat(PurchaseRequestParser.hasIdempotencyKey(parser.parse("7", "7001", "20210101", body, "till-1/42"))).isTrue();
        assertThat(PurchaseRequestParser.hasIdempotencyKey(parser.parse("7", "7001", "20210101", body, null))).isFalse();
    }
}
