package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.contract.IdRanges;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.util.unit.DataSize;

class PurchaseRequestParserTest {

    private final PurchaseRequestParser parser = new PurchaseRequestParser(new IdRanges(1024, 100000),
            new PurchaseLimits(100, DataSize.ofKilobytes(64)));

    private Purchase parse(String store, String customer, String date, String body) {
        return parser.parse(store, customer, date, body.getBytes(StandardCharsets.UTF_8)).purchase();
    }

    @Test
    void acceptsTheStandardClientsBody() {
        Purchase purchase = parse("7", "7001", "20210101",
                "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":1},{\"ItemID\":\"5\",\"numberOfItems:\":2}]}");

        assertThat(purchase.storeId()).isEqualTo(7);
        assertThat(purchase.customerId()).isEqualTo(7001);
        assertThat(purchase.date()).isEqualTo(LocalDate.of(2021, 1, 1));
        assertThat(purchase.items()).containsExactly(new PurchaseItem(101, 1), new PurchaseItem(5, 2));
        assertThat(purchase.purchaseId()).isNotNull();
    }

    @Test
    void acceptsNumericIdsStringCountsBothKeySpellingsAndIgnoresUnknownFields() {
        Purchase purchase = parse("1024", "0", "20240229", """
                {"note":"x","items":[{"ItemID":3,"numberOfItems":"4","extra":[1]},
                                     {"ItemID":"100000","numberOfItems:":"2"},
                                     {"ItemID":"9","numberOfItems":2,"numberOfItems:":2}]}""");

        assertThat(purchase.items()).containsExactly(new PurchaseItem(3, 4), new PurchaseItem(100000, 2),
                new PurchaseItem(9, 2));
    }

    @Test
    void assignsADifferentIdToEveryPurchase() {
        String body = "{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":1}]}";

        assertThat(parse("1", "1", "20210101", body).purchaseId())
                .isNotEqualTo(parse("1", "1", "20210101", body).purchaseId());
    }

    @Test
    void anIdempotencyKeyGivesARetryTheSamePurchaseIdWithinItsStoreAndAnotherPurchaseItsOwn() {
        byte[] body = "{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":1}]}".getBytes(StandardCharsets.UTF_8);
        byte[] otherBody = "{\"items\":[{\"ItemID\":\"2\",\"numberOfItems\":1}]}".getBytes(StandardCharsets.UTF_8);

        PurchaseRequest first = parser.parse("7", "7001", "20210101", body, "till-3/receipt-981");
        PurchaseRequest retry = parser.parse("7", "7001", "20210101", body, "till-3/receipt-981");
        PurchaseRequest otherStore = parser.parse("8", "7001", "20210101", body, "till-3/receipt-981");
        PurchaseRequest otherKey = parser.parse("7", "7001", "20210101", body, "till-3/receipt-982");
        PurchaseRequest otherPurchase = parser.parse("7", "7001", "20210101", otherBody, "till-3/receipt-981");

        assertThat(retry.purchase().purchaseId()).isEqualTo(first.purchase().purchaseId());
        assertThat(retry.idempotencyKey()).isEqualTo(first.idempotencyKey());
        assertThat(otherStore.purchase().purchaseId()).isNotEqualTo(first.purchase().purchaseId());
        assertThat(otherStore.idempotencyKey().key()).isNotEqualTo(first.idempotencyKey().key());
        assertThat(otherKey.purchase().purchaseId()).isNotEqualTo(first.purchase().purchaseId());
        assertThat(otherKey.idempotencyKey().key()).isNotEqualTo(first.idempotencyKey().key());
        assertThat(otherPurchase.purchase().purchaseId()).as("a reused key with another body is another purchase")
                .isNotEqualTo(first.purchase().purchaseId());
        assertThat(otherPurchase.idempotencyKey().key()).as("under the same key, which the idempotency store checks")
                .isEqualTo(first.idempotencyKey().key());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "t\u00e4ll"})
    void rejectsAnUnusableIdempotencyKey(String key) {
        byte[] body = "{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":1}]}".getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> parser.parse("7", "7001", "20210101", body, key))
                .isInstanceOf(InvalidPurchaseException.class)
                .hasMessageContaining("Idempotency-Key");
        assertThatThrownBy(() -> parser.parse("7", "7001", "20210101", body, "k".repeat(129)))
                .isInstanceOf(InvalidPurchaseException.class);
    }

    @ParameterizedTest(name = "storeID={0} custID={1} date={2} -> {3}")
    @CsvSource(delimiter = '|', value = {
            "abc  | 1          | 20210101 | storeID 'abc' is not an integer",
            "0    | 1          | 20210101 | storeID 0 is not a known store (1..1024)",
            "1025 | 1          | 20210101 | storeID 1025 is not a known store",
            "-3   | 1          | 20210101 | storeID -3 is not a known store",
            "99999999999999999999 | 1 | 20210101 | storeID '99999999999999999999' is not an integer",
            "1    | x          | 20210101 | custID 'x' is not a 32-bit integer",
            "1    | 3000000000 | 20210101 | custID '3000000000' is not a 32-bit integer",
            "1    | 1          | 2021-01-01 | date '2021-01-01' is not in the form yyyyMMdd",
            "1    | 1          | 2021011  | date '2021011' is not in the form yyyyMMdd",
            "1    | 1          | 20210230 | date '20210230' is not a real calendar date",
            "1    | 1          | 20211301 | date '20211301' is not a real calendar date",
            "1    | 1          | 20230229 | date '20230229' is not a real calendar date",
    })
    void rejectsBadPathValues(String store, String customer, String date, String message) {
        assertThatThrownBy(() -> parse(store, customer, date, "{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":1}]}"))
                .isInstanceOf(InvalidPurchaseException.class).hasMessageContaining(message);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "``                                   | the body is empty",
            "`   `                                | the body holds no JSON value",
            "`{`                                  | the body is not valid JSON",
            "`{\"items\":[}`                      | the body is not valid JSON",
            "`{\"items\":[]} trailing`            | the body is not valid JSON",
            "`null`                               | the body must be a JSON object like {\"items\":[...]}, not null",
            "`[{\"ItemID\":\"1\"}]`               | the body must be a JSON object like {\"items\":[...]}, not an array",
            "`\"items\"`                          | the body must be a JSON object",
            "`42`                                 | the body must be a JSON object",
            "`{}`                                 | items is missing",
            "`{\"items\":null}`                   | items is missing",
            "`{\"items\":{}}`                     | items must be an array, not an object",
            "`{\"items\":[]}`                     | items must not be empty",
            "`{\"items\":[7]}`                    | items[0] must be an object, not 7",
            "`{\"items\":[{\"numberOfItems\":1}]}` | items[0].ItemID is missing",
            "`{\"items\":[{\"ItemID\":\"abc\",\"numberOfItems\":1}]}` | items[0].ItemID must be an integer (a JSON number or a string holding one), not the string \"abc\"",
            "`{\"items\":[{\"ItemID\":\" 1\",\"numberOfItems\":1}]}`  | items[0].ItemID must be an integer",
            "`{\"items\":[{\"ItemID\":1.5,\"numberOfItems\":1}]}`     | items[0].ItemID must be an integer",
            "`{\"items\":[{\"ItemID\":true,\"numberOfItems\":1}]}`    | items[0].ItemID must be an integer",
            "`{\"items\":[{\"ItemID\":123456789012345678901234567890,\"numberOfItems\":1}]}` | items[0].ItemID must be an integer",
            "`{\"items\":[{\"ItemID\":\"0\",\"numberOfItems\":1}]}`   | items[0].ItemID 0 is out of range 1..100000",
            "`{\"items\":[{\"ItemID\":\"100001\",\"numberOfItems\":1}]}` | items[0].ItemID 100001 is out of range",
            "`{\"items\":[{\"ItemID\":-5,\"numberOfItems\":1}]}`      | items[0].ItemID -5 is out of range",
            "`{\"items\":[{\"ItemID\":\"1\"}]}`                       | items[0].numberOfItems is missing",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":null}]}` | items[0].numberOfItems is missing",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":0}]}`   | items[0].numberOfItems must be a positive integer, not 0",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems:\":-2}]}` | items[0].numberOfItems must be a positive integer, not -2",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":\"-1\"}]}` | items[0].numberOfItems must be a positive integer, not -1",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":\"abc\"}]}` | items[0].numberOfItems must be an integer",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":\"1.5\"}]}` | items[0].numberOfItems must be an integer",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":2.5}]}` | items[0].numberOfItems must be an integer",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":3000000000}]}` | items[0].numberOfItems must be a positive integer, not 3000000000",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":99999999999999999999999}]}` | items[0].numberOfItems must be an integer",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":1,\"numberOfItems:\":2}]}` | items[0] has both numberOfItems and numberOfItems: with different values",
            "`{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":1},{\"ItemID\":\"2\"}]}` | items[1].numberOfItems is missing",
    })
    void rejectsBadBodiesNamingTheProblem(String body, String message) {
        assertThatThrownBy(() -> parse("1", "1000", "20210101", body))
                .isInstanceOf(InvalidPurchaseException.class).hasMessageContaining(message);
    }

    @Test
    void rejectsMoreItemsThanTheCap() {
        String item = "{\"ItemID\":\"1\",\"numberOfItems\":1}";
        String body = "{\"items\":[" + String.join(",", java.util.Collections.nCopies(101, item)) + "]}";

        assertThatThrownBy(() -> parse("1", "1", "20210101", body))
                .hasMessage("items has 101 entries; at most 100 are allowed");
    }

    @Test
    void rejectsBytesThatAreNotUtf8() {
        byte[] body = {'{', '"', 'i', 't', 'e', 'm', 's', '"', ':', '[', '{', '"', (byte) 0xC3, (byte) 0x28, '"', ':', '1', '}', ']', '}'};

        assertThatThrownBy(() -> parser.parse("1", "1", "20210101", body))
                .isInstanceOf(InvalidPurchaseException.class).hasMessageContaining("the body is not valid JSON");
    }

    @Test
    void rejectsDeepNestingWithoutAStackOverflow() {
        String body = "{\"items\":" + "[".repeat(5000) + "]".repeat(5000) + "}";

        assertThatThrownBy(() -> parse("1", "1", "20210101", body))
                .isInstanceOf(InvalidPurchaseException.class).hasMessageContaining("the body is not valid JSON");
    }
}
