package com.supermarket.loadclient.run;

import java.time.Duration;
import java.util.Locale;

/**
 * Which stores re-send an accepted purchase late ({@code run --late-retries}), and when: after
 * {@code afterPurchases} further accepted purchases of the store, or {@code afterTime} after the
 * purchase's 201. Exactly one of the two is set. Immutable.
 *
 * @param stores         stores 1..stores each re-send their first accepted purchase; 0 = none
 * @param afterPurchases further accepted purchases of the store before the re-send (0 when timed)
 * @param afterTime      time after the 201 before the re-send, or null when counted in purchases
 */
record LateRetryPlan(int stores, long afterPurchases, Duration afterTime) {

    static final LateRetryPlan NONE = new LateRetryPlan(0, 1, null);

    LateRetryPlan {
        if (stores < 0 || (afterTime == null) == (afterPurchases <= 0)
                || (afterTime != null && (afterTime.isNegative() || afterTime.isZero()))) {
            throw new IllegalArgumentException("a late-retry plan needs stores >= 0 and either a positive count or a positive time");
        }
    }

    /**
     * @param after a count of purchases ({@code 1100}) or a time ({@code 500ms}, {@code 90s},
     *              {@code 5m}, {@code 1h})
     * @throws IllegalArgumentException if {@code after} is neither
     */
    static LateRetryPlan of(int stores, String after) {
        String value = after.trim().toLowerCase(Locale.ROOT).replace("_", "").replace(",", "");
        if (value.matches("\\d+")) {
            return new LateRetryPlan(stores, Long.parseLong(value), null);
        }
        Duration duration = TimeSpans.parseOrNull(value);
        if (duration == null) {
            throw new IllegalArgumentException("not a count of purchases or a time (" + TimeSpans.FORMS + "): " + after);
        }
        return new LateRetryPlan(stores, 0, duration);
    }

    boolean chosen(int store) {
        return store <= stores;
    }
}
