package com.supermarket.loadclient.run;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads the times people write on the command line: {@code 500ms}, {@code 90s}, {@code 2m}, {@code 1h}. Stateless. */
final class TimeSpans {

    static final String FORMS = "500ms, 90s, 2m, 1h";

    private static final Pattern TIME = Pattern.compile("(\\d+)(ms|s|m|h)");

    private TimeSpans() {
    }

    /** The time {@code text} names, or null if it names none. */
    static Duration parseOrNull(String text) {
        Matcher time = TIME.matcher(text.trim().toLowerCase(Locale.ROOT).replace("_", ""));
        if (!time.matches()) {
            return null;
        }
        long amount = Long.parseLong(time.group(1));
        return switch (time.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            default -> Duration.ofHours(amount);
        };
    }
}
