package com.supermarket.loadclient.verify;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.IntToLongFunction;

import com.supermarket.loadclient.verify.PurchaseTotals.Ranked;

/**
 * Compares a GET's answer with the one the brute-force totals give, and says what differs. Both
 * GETs order their lists most first with ties going to the lower id, in store-service and in
 * purchase-api's merge of partitions alike, so the expected list is unique and the comparison is
 * exact, tie order included; the difference names its kind (a wrong count, a tie broken the
 * other way, a missing or extra entry) so a mismatch can be read at once. Stateless.
 */
final class AnswerComparison {

    private AnswerComparison() {
    }

    /**
     * How {@code actual} differs from {@code expected}, or empty when they are equal.
     *
     * @param what     the entries' kind, for the message ({@code item} or {@code store})
     * @param truth    the true quantity of an entry's id, to tell a wrong count from a wrong choice
     */
    static Optional<String> difference(List<Ranked> expected, List<Ranked> actual, String what, IntToLongFunction truth) {
        if (expected.equals(actual)) {
            return Optional.empty();
        }
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
            Ranked want = expected.get(i);
            Ranked got = actual.get(i);
            if (want.equals(got)) {
                continue;
            }
            long trueQuantity = truth.applyAsLong(got.id());
            if (got.quantity() != trueQuantity) {
                return Optional.of(String.format(Locale.ROOT, "#%d %s %d has %d, the database %d (expected %s)", i + 1, what,
                        got.id(), got.quantity(), trueQuantity, entries(expected, what)));
            }
            if (got.quantity() == want.quantity()) {
                return Optional.of(String.format(Locale.ROOT, "#%d is %s %d, expected %s %d with the same %d: "
                        + "a tie goes to the lower id", i + 1, what, got.id(), what, want.id(), want.quantity()));
            }
            return Optional.of(String.format(Locale.ROOT, "#%d is %s %d x %d, expected %s %d x %d (expected %s)", i + 1, what,
                    got.id(), got.quantity(), what, want.id(), want.quantity(), entries(expected, what)));
        }
        if (actual.size() < expected.size()) {
            return Optional.of(String.format(Locale.ROOT, "%d entries, expected %d: missing %s", actual.size(), expected.size(),
                    entries(expected.subList(actual.size(), expected.size()), what)));
        }
        return Optional.of(String.format(Locale.ROOT, "%d entries, expected %d: extra %s", actual.size(), expected.size(),
                entries(actual.subList(expected.size(), actual.size()), what)));
    }

    private static String entries(List<Ranked> entries, String what) {
        if (entries.isEmpty()) {
            return "none";
        }
        StringBuilder text = new StringBuilder();
        for (Ranked entry : entries) {
            text.append(text.isEmpty() ? what + " " : ", ").append(entry.id()).append(" x ").append(entry.quantity());
        }
        return text.toString();
    }
}
