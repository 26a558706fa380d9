package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.IdRanges;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.util.unit.DataSize;

class PurchaseFingerprintTest {

    private static final String BODY = "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1},{\"ItemID\":\"5\",\"numberOfItems:\":2}]}";

    private final PurchaseRequestParser parser = new PurchaseRequestParser(new IdRanges(1024, 100000),
            new PurchaseLimits(100, DataSize.ofKilobytes(64)));

    private String fingerprint(String store, String customer, String date, String body) {
        return parser.parse(store, customer, date, body.getBytes(StandardCharsets.UTF_8), "till-1/42").idempotencyKey()
                .fingerprint();
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

    /** A retry comes later: neither the fingerprint nor the purchase id derived from it depends on the time. */
    @Test
    void leavesOutTheTimeOfAcceptance() {
        PurchaseLimits limits = new PurchaseLimits(100, DataSize.ofKilobytes(64));
        IdRanges platform = new IdRanges(1024, 100000);
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        PurchaseRequest first = new PurchaseRequestParser(platform, limits, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC))
                .parse("7", "7001", "20210101", body, "till-1/42");
        PurchaseRequest later = new PurchaseRequestParser(platform, limits, Clock.systemUTC())
                .parse("7", "7001", "20210101", body, "till-1/42");

        assertThat(later.purchase().acceptedAt()).isNotEqualTo(first.purchase().acceptedAt());
        assertThat(later.idempotencyKey()).isEqualTo(first.idempotencyKey());
        assertThat(later.purchase().purchaseId()).isEqualTo(first.purchase().purchaseId());
    }

    @Test
    void onlyPurchasesWithAnIdempotencyKeyAreKeyed() {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

        assertThat(parser.parse("7", "7001", "20210101", body, "till-1/42").idempotencyKey()).isNotNull();
        assertThat(parser.parse("7", "7001", "20210101", body, null).idempotencyKey()).isNull();
    }
}
