package com.supermarket.loadclient.run;

import java.util.concurrent.atomic.LongAdder;

import com.supermarket.loadclient.result.PurchaseOutcomes;

/**
 * One store's late re-send of an accepted purchase ({@link LateRetryPlan}): keeps the store's
 * first accepted purchase (its {@code Idempotency-Key}, path and body), counts the store's
 * accepted purchases after it, and says when the re-send is due. What a till does when a 201 was
 * lost on the way and it sends the same purchase again much later: a correct platform stores and
 * counts it once, however long after.
 * <p>
 * Thread-safety: confined to its store's event loop; only the shared {@link Tally} is
 * thread-safe.
 */
final class LateRetry {

    /** Late re-sends of the whole run. Thread-safe (adders). */
    static final class Tally {
        private final int stores;
        private final LongAdder sent = new LongAdder();
        private final LongAdder answered = new LongAdder();
        private final LongAdder failed = new LongAdder();

        Tally(int stores) {
            this.stores = stores;
        }

        PurchaseOutcomes.LateRetries snapshot() {
            return new PurchaseOutcomes.LateRetries(stores, sent.sum(), answered.sum(), failed.sum());
        }
    }

    private enum State { WAITING_FOR_AN_ACCEPTED_PURCHASE, KEPT, IN_FLIGHT, DONE }

    private final LateRetryPlan plan;
    private final Tally tally;
    private State state = State.WAITING_FOR_AN_ACCEPTED_PURCHASE;
    private String key;
    private String path;
    private CharSequence body;
    private long acceptedAtNanos;
    private long acceptedAfter;
    private int sentAfter;

    LateRetry(LateRetryPlan plan, Tally tally) {
        this.plan = plan;
        this.tally = tally;
    }

    /** A purchase of the store was accepted: the first is kept, later ones are counted. */
    void accepted(CharSequence purchaseKey, String purchasePath, CharSequence purchaseBody, long nowNanos) {
        if (state == State.WAITING_FOR_AN_ACCEPTED_PURCHASE) {
            key = purchaseKey.toString();
            path = purchasePath;
            body = purchaseBody;
            acceptedAtNanos = nowNanos;
            state = State.KEPT;
        } else if (state == State.KEPT) {
            acceptedAfter++;
        }
    }

    /** A new purchase of the store was sent (to bound the extra purchases a count asks for). */
    void purchaseSent() {
        if (state == State.KEPT) {
            sentAfter++;
        }
    }

    boolean due(long nowNanos) {
        return state == State.KEPT && (plan.afterTime() == null
                ? acceptedAfter >= plan.afterPurchases()
                : nowNanos - acceptedAtNanos >= plan.afterTime().toNanos());
    }

    /**
     * Whether the store, its profile sent, should go on sending new purchases until the count is
     * reached; at most twice the count, so a platform refusing them cannot keep the run going.
     */
    boolean wantsMorePurchases() {
        return state == State.KEPT && plan.afterTime() == null && sentAfter < 2 * plan.afterPurchases();
    }

    /** Nanoseconds until a timed re-send is due, or -1 when there is nothing to wait for. */
    long nanosUntilDue(long nowNanos) {
        if (state != State.KEPT || plan.afterTime() == null) {
            return -1;
        }
        return Math.max(0, acceptedAtNanos + plan.afterTime().toNanos() - nowNanos);
    }

    /** Marks the re-send as in flight; the store then sends {@link #key}, {@link #path} and {@link #body}. */
    void sending() {
        state = State.IN_FLIGHT;
        tally.sent.increment();
    }

    boolean inFlight() {
        return state == State.IN_FLIGHT;
    }

    /** The re-send got its final answer. */
    void answered(boolean success) {
        state = State.DONE;
        (success ? tally.answered : tally.failed).increment();
    }

    String key() {
        return key;
    }

    String path() {
        return path;
    }

    CharSequence body() {
        return body;
    }
}
