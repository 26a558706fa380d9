package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    private final RetryPolicy policy = RetryPolicy.standard(12);
    private final SplittableRandom random = new SplittableRandom(7);

    @Test
    void backsOffExponentiallyWithHalfOfEachStepRandomUpToTheCap() {
        long[] steps = { 100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000, 10000, 10000 };
        for (int attempt = 1; attempt <= steps.length; attempt++) {
            long step = Duration.ofMillis(steps[attempt - 1]).toNanos();
            for (int i = 0; i < 1000; i++) {
                assertThat(policy.delayNanos(attempt, null, random)).isBetween(step / 2, step);
            }
        }
    }

    @Test
    void waitsAtLeastWhatRetryAfterSaysInSecondsOrAsADate() {
        assertThat(policy.delayNanos(1, "3", random)).isEqualTo(Duration.ofSeconds(3).toNanos());
        String inTenSeconds = ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(10).format(DateTimeFormatter.RFC_1123_DATE_TIME);
        assertThat(policy.delayNanos(1, inTenSeconds, random)).isBetween(Duration.ofSeconds(8).toNanos(),
                Duration.ofSeconds(10).toNanos());
        assertThat(policy.delayNanos(1, "3600", random)).isEqualTo(RetryPolicy.MAX_RETRY_AFTER.toNanos());
        assertThat(policy.delayNanos(1, "soon", random)).isBetween(Duration.ofMillis(50).toNanos(),
                Duration.ofMillis(100).toNanos());
    }

    @Test
    void retriesOverloadAndServerErrorsButNotBadRequests() {
        assertThat(RetryPolicy.retryableStatus(503)).isTrue();
        assertThat(RetryPolicy.retryableStatus(502)).isTrue();
        assertThat(RetryPolicy.retryableStatus(429)).isTrue();
        assertThat(RetryPolicy.retryableStatus(500)).isTrue();
        assertThat(RetryPolicy.retryableStatus(501)).isFalse();
        assertThat(RetryPolicy.retryableStatus(400)).isFalse();
        assertThat(RetryPolicy.retryableStatus(404)).isFalse();
    }
}
