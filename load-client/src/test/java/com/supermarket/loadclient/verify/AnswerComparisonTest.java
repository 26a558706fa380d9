package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.function.IntToLongFunction;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.verify.PurchaseTotals.Ranked;

class AnswerComparisonTest {

    /** Store 3's true quantities. */
    private static final Map<Integer, Long> SOLD = Map.of(70, 7L, 9, 6L, 50, 4L, 8, 4L, 11, 1L);
    private static final IntToLongFunction TRUTH = item -> SOLD.getOrDefault(item, 0L);
    private static final List<Ranked> EXPECTED = List.of(new Ranked(70, 7), new Ranked(9, 6), new Ranked(8, 4));

    @Test
    void theExactAnswerHasNoDifference() {
        assertThat(AnswerComparison.difference(EXPECTED, List.copyOf(EXPECTED), "item", TRUTH)).isEmpty();
        assertThat(AnswerComparison.difference(List.of(), List.of(), "item", TRUTH)).isEmpty();
    }

    @Test
    void aCountOffByOneIsNamedWithTheDatabasesCount() {
        List<Ranked> actual = List.of(new Ranked(70, 7), new Ranked(9, 7), new Ranked(8, 4));

        assertThat(AnswerComparison.difference(EXPECTED, actual, "item", TRUTH))
                .hasValue("#2 item 9 has 7, the database 6 (expected item 70 x 7, 9 x 6, 8 x 4)");
    }

    @Test
    void aTieBrokenTowardsTheHigherIdIsAMismatch() {
        // Items 8 and 50 both sold 4: the third place goes to 8.
        List<Ranked> actual = List.of(new Ranked(70, 7), new Ranked(9, 6), new Ranked(50, 4));

        assertThat(AnswerComparison.difference(EXPECTED, actual, "item", TRUTH))
                .hasValue("#3 is item 50, expected item 8 with the same 4: a tie goes to the lower id");
    }

    @Test
    void aListLongerOrShorterThanTheLimitAllowsIsAMismatch() {
        List<Ranked> longer = List.of(new Ranked(70, 7), new Ranked(9, 6), new Ranked(8, 4), new Ranked(50, 4));
        List<Ranked> shorter = List.of(new Ranked(70, 7), new Ranked(9, 6));

        assertThat(AnswerComparison.difference(EXPECTED, longer, "item", TRUTH)).hasValue("4 entries, expected 3: extra item 50 x 4");
        assertThat(AnswerComparison.difference(EXPECTED, shorter, "item", TRUTH)).hasValue("2 entries, expected 3: missing item 8 x 4");
    }

    @Test
    void aRightCountInTheWrongPlaceIsAMismatch() {
        List<Ranked> actual = List.of(new Ranked(70, 7), new Ranked(11, 1), new Ranked(9, 6));

        assertThat(AnswerComparison.difference(EXPECTED, actual, "item", TRUTH))
                .hasValue("#2 is item 11 x 1, expected item 9 x 6 (expected item 70 x 7, 9 x 6, 8 x 4)");
    }

    @Test
    void answersWithEntriesForAStoreWithoutSalesAreAMismatch() {
        assertThat(AnswerComparison.difference(List.of(), List.of(new Ranked(5, 1)), "store", store -> 0))
                .hasValue("1 entries, expected 0: extra store 5 x 1");
    }
}
