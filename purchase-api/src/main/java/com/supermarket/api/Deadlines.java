package com.supermarket.api;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Timeouts of the futures the API waits on (a batch's confirm, a key claim, a store query), on
 * one timer thread that wakes only when a deadline passes: a future completed in time takes its
 * timer out of the queue without waking it. {@link CompletableFuture#orTimeout} on Java 25
 * files every timeout with the common pool's delay scheduler, whose thread wakes to file it and
 * again to cancel it, and a timed wait of a virtual thread does the same on its carrier pool's.
 * Thread-safe.
 */
@Component
public class Deadlines implements DisposableBean {

    private final ScheduledThreadPoolExecutor timer;

    public Deadlines() {
        timer = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().name("deadlines").daemon().factory());
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * Runs {@code expire} on the timer thread once {@code timeout} has passed, unless
     * {@code future} completed first. {@code expire} must be quick and must not throw.
     */
    public void expire(CompletableFuture<?> future, Duration timeout, Runnable expire) {
        if (future.isDone()) {
            return;
        }
        ScheduledFuture<?> expiry = timer.schedule(expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
        future.whenComplete((result, error) -> expiry.cancel(false));
    }

    /**
     * Fails {@code future} with a {@link TimeoutException} once {@code timeout} has passed, unless
     * it completed first: {@link CompletableFuture#orTimeout} on this timer.
     */
    public void timeOut(CompletableFuture<?> future, Duration timeout) {
        expire(future, timeout, () -> future.completeExceptionally(new TimeoutException()));
    }

    /** The timers waiting to run: those of the futures not yet complete. */
    int pending() {
        return timer.getQueue().size();
    }

    @Override
    public void destroy() {
        timer.shutdownNow();
    }
}
