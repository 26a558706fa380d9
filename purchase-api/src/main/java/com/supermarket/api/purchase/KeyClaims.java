package com.supermarket.api.purchase;

import com.supermarket.api.purchase.IdempotencyStore.Claim;
import com.supermarket.api.purchase.IdempotencyStore.IdempotencyStoreUnavailableException;
import com.supermarket.api.purchase.IdempotencyStore.Outcome;
import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.api.purchase.PurchasePublisher.Pending;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claims of keyed purchases' {@code Idempotency-Key}s in the {@link IdempotencyStore}, before
 * they join the group commit: a purchase whose claim lets it be published is handed on through
 * {@code admit} (the publisher's queue), one whose key names another purchase is answered with an
 * {@link IdempotencyConflictException} (422), a retry of a purchase whose publish was confirmed is
 * answered at once, not published again.
 *
 * <p>A claim holds none of the publisher's in-flight permits, so a store that answers slowly or
 * not at all never holds up the purchases without a key; it holds one of
 * {@code max-claims-in-flight} claim slots, from the claim until the store's answer, and the keyed
 * purchases that come while every slot is taken gather and leave together in the next claim, one
 * round trip (the natural batch). Those that waited the store's longest wait for a slot, or were
 * waiting when a claim failed, are refused ({@link Reason#IDEMPOTENCY_UNAVAILABLE}, nothing
 * published for them), so a keyed purchase is answered within about that wait.
 *
 * <p>Thread-safe: request threads queue purchases for a claim; the threads that complete claims
 * (the store's) sort the answers and claim what waits next. The purchases awaiting a claim are
 * guarded by their queue's monitor; the slots are a semaphore.
 */
final class KeyClaims {

    private static final Logger log = LoggerFactory.getLogger(KeyClaims.class);

    private final IdempotencyStore store;
    private final PublishProperties.Batch settings;
    private final Consumer<Pending> admit;
    /** Claims sent to the store and not yet answered. */
    private final Semaphore claimsInFlight;
    /** Keyed purchases waiting for a claim slot, oldest first; guarded by itself. */
    private final ArrayDeque<Pending> awaitingClaim = new ArrayDeque<>();
    private final Timer latency;
    private final Counter conflicts;
    private final Counter replays;
    private volatile boolean closed;

    /**
     * @param admit takes a purchase whose claim lets it be published (called on the store's
     *              threads); it answers the purchase itself if it cannot take it
     */
    KeyClaims(IdempotencyStore store, PublishProperties.Batch settings, Consumer<Pending> admit, MeterRegistry registry) {
        this.store = store;
        this.settings = settings;
        this.admit = admit;
        this.claimsInFlight = new Semaphore(settings.maxClaimsInFlight());
        this.latency = Timer.builder("api.purchases.idempotency.latency")
                .description("Round trip of one batch's Idempotency-Key claims to the idempotency store, failures included")
                .publishPercentileHistogram()
                .register(registry);
        this.conflicts = Counter.builder("api.purchases.idempotency.conflicts")
                .description("Purchases refused because their Idempotency-Key was used for a different purchase, answered 422")
                .register(registry);
        this.replays = Counter.builder("api.purchases.idempotency.replays")
                .description("Retries of purchases whose publish was confirmed, answered 201 without publishing them again")
                .register(registry);
    }

    /** Queues a keyed purchase for a claim of its key, and claims what waits if a slot is free. */
    void claim(Pending pending) {
        synchronized (awaitingClaim) {
            if (closed) {
                pending.done().completeExceptionally(PurchasePublisher.shuttingDown());
                return;
            }
            if (awaitingClaim.size() >= settings.queueCapacity()) {
                pending.done().completeExceptionally(storeNotAnswering(awaitingClaim.size() + " purchases await their claims"));
                return;
            }
            awaitingClaim.addLast(pending);
        }
        claimWaiting();
    }

    /**
     * While a claim slot is free, claims the keys of every keyed purchase waiting, in one round
     * trip, without waiting for the answer; the answer frees the slot and calls this again (on
     * the store's thread). What waits while every slot is taken gathers into the next claim: the
     * natural batch. A purchase that waited a whole store timeout for a slot is refused: the
     * store is not answering. Called by request threads and on the store's answers.
     */
    private void claimWaiting() {
        while (claimsInFlight.tryAcquire()) {
            List<Pending> batch = new ArrayList<>();
            synchronized (awaitingClaim) {
                long now = System.nanoTime();
                for (Pending pending = awaitingClaim.pollFirst(); pending != null; pending = awaitingClaim.pollFirst()) {
                    if (now - pending.enqueuedNanos() >= store.maxWait().toNanos()) {
                        pending.done().completeExceptionally(storeNotAnswering(settings.maxClaimsInFlight() + " claims await it"));
                    } else {
                        batch.add(pending);
                    }
                }
            }
            if (batch.isEmpty()) {
                claimsInFlight.release();
                synchronized (awaitingClaim) {
                    if (awaitingClaim.isEmpty()) {
                        return; // a purchase queued from here on is claimed by whoever queued it
                    }
                }
                continue;
            }
            send(batch);
        }
    }

    /** Claims the keys of {@code batch} in one call, holding one claim slot. */
    private void send(List<Pending> batch) {
        List<Claim> claims = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            claims.add(pending.claim());
        }
        long start = System.nanoTime();
        CompletableFuture<List<Outcome>> outcomes;
        try {
            outcomes = store.claim(claims);
        } catch (RuntimeException e) {
            outcomes = CompletableFuture.failedFuture(e);
        }
        outcomes.whenComplete((claimed, error) -> {
            latency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            claimsInFlight.release();
            try {
                sort(batch, claimed, error);
            } catch (RuntimeException e) {
                // A bug: the purchases still get their answers (answering twice is harmless).
                log.error("checking the keys of a batch failed", e);
                PurchasePublisher.answer(batch, new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                        "the Idempotency-Key could not be checked; retry later with the same Idempotency-Key", e));
            }
            if (error != null) {
                // Those that came meanwhile would wait for a claim as long again: answer them now.
                refuseAwaiting(storeNotAnswering("a claim before it failed: " + rootMessage(error)));
            }
            claimWaiting();
        });
    }

    /**
     * Sorts the claimed purchases by what the store found: a conflict is answered 422, a retry of
     * a confirmed purchase 201, a store that did not answer 503 for all; the rest are admitted.
     */
    private void sort(List<Pending> batch, List<Outcome> outcomes, Throwable error) {
        if (error != null) {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (!(cause instanceof IdempotencyStoreUnavailableException)) {
                log.error("the idempotency check failed unexpectedly", cause);
            }
            PurchasePublisher.answer(batch, new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                    "the Idempotency-Key could not be checked: the idempotency store is unavailable (" + cause.getMessage()
                            + "); the purchase was not accepted, retry later with the same Idempotency-Key", cause));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            Pending pending = batch.get(i);
            switch (outcomes.get(i)) {
                case CONFLICT -> {
                    conflicts.increment();
                    pending.done().completeExceptionally(new IdempotencyConflictException("the Idempotency-Key was"
                            + " already used for a different purchase (store, customer, date or items differ); the first"
                            + " purchase stands and this one was not accepted: send a different purchase with a new"
                            + " Idempotency-Key"));
                }
                case CONFIRMED -> {
                    replays.increment();
                    pending.done().complete(null);
                }
                case FIRST, SAME -> admit.accept(pending);
            }
        }
    }

    private void refuseAwaiting(PublishRefusedException refused) {
        synchronized (awaitingClaim) {
            for (Pending pending = awaitingClaim.pollFirst(); pending != null; pending = awaitingClaim.pollFirst()) {
                pending.done().completeExceptionally(refused);
            }
        }
    }

    private static String rootMessage(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return String.valueOf(cause.getMessage());
    }

    private static PublishRefusedException storeNotAnswering(String why) {
        return new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE, "the Idempotency-Key could not be checked:"
                + " the idempotency store is not answering (" + why + "); the purchase was not accepted, retry later with"
                + " the same Idempotency-Key", null);
    }

    /**
     * Stops claiming: refuses the purchases awaiting a claim slot and waits (up to the store's
     * longest wait) for the claims in flight, whose purchases are then answered or admitted (the
     * publisher refuses them once it is closed).
     */
    void close() throws InterruptedException {
        closed = true;
        refuseAwaiting(PurchasePublisher.shuttingDown());
        if (claimsInFlight.tryAcquire(settings.maxClaimsInFlight(), store.maxWait().toMillis(), TimeUnit.MILLISECONDS)) {
            claimsInFlight.release(settings.maxClaimsInFlight());
        }
    }
}
