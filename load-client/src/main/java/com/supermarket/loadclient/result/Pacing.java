package com.supermarket.loadclient.result;

/**
 * What a paced run ({@code --rate}) did with its schedule. Each request has an intended send time;
 * when it comes and every one of the store's connections ({@code --max-in-flight-per-store}) is
 * still busy with an earlier request (or its retries), the request starts late, as soon as one is
 * free. Nothing is dropped (k6's {@code dropped_iterations}): a late request is sent and timed
 * from its intended time, so the wait shows in its latency (coordinated omission). Empty for a
 * closed loop, and in result files written before it was counted. Immutable.
 *
 * @param intendedSends requests started on the schedule (late re-sends included)
 * @param lateStarts    of those, the ones that started late because no connection of their
 *                      store was free at their intended time
 * @param meanLateMs    how late they started, on average
 * @param maxLateMs     how late the latest one started
 */
public record Pacing(long intendedSends, long lateStarts, double meanLateMs, double maxLateMs) {

    public static Pacing none() {
        return new Pacing(0, 0, 0, 0);
    }
}
