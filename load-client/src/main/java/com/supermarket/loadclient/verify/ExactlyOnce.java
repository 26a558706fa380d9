package com.supermarket.loadclient.verify;

import java.util.Locale;

/**
 * The end-to-end promise, checked from a run's purchases and the services' public counts: every
 * purchase the API accepted is stored once by purchases-service and counted once by
 * store-service. Stateless.
 * <p>
 * The rule, per purchase (per {@code Idempotency-Key}, so a till's retries and late re-sends are
 * one purchase), with A accepted (some attempt answered 201), M maybe accepted (no 201, but some
 * attempt got a 5xx, a timeout or a lost connection, which promise nothing either way), S the
 * purchases stored and C those counted since the run began:
 * <ul>
 *   <li>purchases-service must hold every accepted purchase and nothing beyond A + M; its primary
 *       key cannot hold a purchase twice, so S, taken between A and A + M, is what got through:
 *       E = min(max(S, A), A + M);</li>
 *   <li>store-service must count exactly E;</li>
 *   <li>lost = (A - S)+ + (E - C)+ (accepted purchases missing from purchases-service, and
 *       purchases that got through but store-service did not count);</li>
 *   <li>duplicated = (S - (A + M))+ + (C - E)+ (more stored than were ever sent, and counted more
 *       than got through: a purchase counted twice).</li>
 * </ul>
 * where (x)+ is max(x, 0).
 */
final class ExactlyOnce {

    private ExactlyOnce() {
    }

    /**
     * @param accepted      A, purchases some attempt of which got a 201
     * @param maybeAccepted M, purchases without a 201 some attempt of which promised nothing
     * @param stored        S, purchases purchases-service stored since the run began
     * @param counted       C, purchases store-service counted since the run began
     */
    record Verdict(long accepted, long maybeAccepted, long stored, long counted, long lost, long duplicated) {

        boolean kept() {
            return lost == 0 && duplicated == 0;
        }

        /** {@code N accepted, M maybe-accepted, S stored, C counted: L lost, D duplicated}. */
        String line() {
            return String.format(Locale.ROOT, "%d accepted, %d maybe-accepted, %d stored, %d counted: %d lost, %d duplicated",
                    accepted, maybeAccepted, stored, counted, lost, duplicated);
        }

        /** The six numbers, space-separated, for scripts' tables. */
        String numbers() {
            return accepted + " " + maybeAccepted + " " + stored + " " + counted + " " + lost + " " + duplicated;
        }
    }

    static Verdict judge(long accepted, long maybeAccepted, long stored, long counted) {
        long most = accepted + maybeAccepted;
        long gotThrough = Math.min(Math.max(stored, accepted), most);
        long lost = positive(accepted - stored) + positive(gotThrough - counted);
        long duplicated = positive(stored - most) + positive(counted - gotThrough);
        return new Verdict(accepted, maybeAccepted, stored, counted, lost, duplicated);
    }

    private static long positive(long value) {
        return Math.max(0, value);
    }
}
