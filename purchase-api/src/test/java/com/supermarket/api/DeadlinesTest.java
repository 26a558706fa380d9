package com.supermarket.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DeadlinesTest {

    private final Deadlines deadlines = new Deadlines();

    @AfterEach
    void stop() {
        deadlines.destroy();
    }

    @Test
    void aFutureNotCompleteInTimeIsExpiredOnce() throws InterruptedException {
        CompletableFuture<String> future = new CompletableFuture<>();
        CountDownLatch expired = new CountDownLatch(1);

        deadlines.expire(future, Duration.ofMillis(50), expired::countDown);

        assertThat(expired.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(deadlines.pending()).isZero();
    }

    @Test
    void aFutureCompleteInTimeTakesItsTimerAwayUnrun() throws InterruptedException {
        AtomicInteger expired = new AtomicInteger();
        CompletableFuture<String> late = new CompletableFuture<>();
        CompletableFuture<String> onTime = new CompletableFuture<>();
        deadlines.expire(onTime, Duration.ofMillis(200), expired::incrementAndGet);
        deadlines.expire(late, Duration.ofMillis(400), () -> late.complete("expired"));
        assertThat(deadlines.pending()).isEqualTo(2);

        onTime.complete("answer");

        assertThat(deadlines.pending()).as("the completed future's timer left the queue").isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).until(late::isDone);
        assertThat(expired).as("the completed future's expiry never ran").hasValue(0);
    }

    @Test
    void aTimedOutFutureFailsWithATimeoutException() {
        CompletableFuture<String> future = new CompletableFuture<>();

        deadlines.timeOut(future, Duration.ofMillis(50));

        await().atMost(Duration.ofSeconds(5)).until(future::isDone);
        assertThat(future).failsWithin(Duration.ZERO).withThrowableThat().withCauseInstanceOf(TimeoutException.class);
        assertThat(deadlines.pending()).isZero();
    }

    @Test
    void aFutureAlreadyCompleteGetsNoTimer() {
        AtomicInteger expired = new AtomicInteger();

        deadlines.expire(CompletableFuture.completedFuture("done"), Duration.ZERO, expired::incrementAndGet);

        assertThat(deadlines.pending()).isZero();
        assertThat(expired).hasValue(0);
    }
}
