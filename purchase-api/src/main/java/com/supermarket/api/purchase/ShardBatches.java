package com.supermarket.api.purchase;

import com.supermarket.api.purchase.PurchasePublisher.Pending;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The purchases waiting to be published, by shard (their routing key), and the group commit's
 * policy: which shard's batch may leave now.
 *
 * <p>A shard's waiting purchases may leave at once when none of its batches is in flight, and
 * otherwise only once they fill a batch ({@code maxSize}); else they wait for its confirm
 * ({@link #mayLeave}). So nothing waits at a light load, and under load each shard sends one
 * batch per confirm round trip, holding what came during it: the broker's confirm latency
 * paces the batches and their size follows the load. Among the shards that may send, the one
 * holding the oldest purchase goes first, so shards that must share the in-flight permits take
 * turns.
 *
 * <p>Thread-safety: the waiting purchases belong to the sender thread alone. Each shard's count
 * of batches in flight is atomic: the sender raises it as it cuts a batch ({@link #cut}), the
 * confirm callbacks lower it ({@link #settled}), request threads read it ({@link #busy}) to know
 * whether the sender has to be woken for their purchase. A shard, once seen, stays in the map:
 * shards are routing keys of the key table, a bounded set.
 */
final class ShardBatches {

    private final int maxSize;
    private final ConcurrentHashMap<String, Shard> shards = new ConcurrentHashMap<>();

    private static final class Shard {
        /** Oldest first; sender thread only. */
        final ArrayDeque<Pending> waiting = new ArrayDeque<>();
        final AtomicInteger inFlight = new AtomicInteger();
    }

    ShardBatches(int maxSize) {
        this.maxSize = maxSize;
    }

    /**
     * The policy: whether a shard's {@code waiting} purchases may leave as a batch while
     * {@code inFlight} of its batches await their confirms.
     */
    static boolean mayLeave(int waiting, int inFlight, int maxSize) {
        return waiting > 0 && (inFlight == 0 || waiting >= maxSize);
    }

    /** Adds a purchase to its shard's batch. Sender thread. */
    void add(Pending pending) {
        shards.computeIfAbsent(pending.routingKey(), key -> new Shard()).waiting.addLast(pending);
    }

    /**
     * The routing key of the shard whose batch may leave now, that of the oldest waiting purchase
     * first; null when none may. Sender thread.
     */
    String next() {
        String next = null;
        long oldest = 0;
        for (var entry : shards.entrySet()) {
            Shard shard = entry.getValue();
            if (mayLeave(shard.waiting.size(), shard.inFlight.get(), maxSize)) {
                long enqueued = shard.waiting.peekFirst().enqueuedNanos();
                if (next == null || enqueued - oldest < 0) {
                    next = entry.getKey();
                    oldest = enqueued;
                }
            }
        }
        return next;
    }

    /** Takes up to max-size purchases of the shard, oldest first, as a batch now in flight. Sender thread. */
    List<Pending> cut(String routingKey) {
        Shard shard = shards.get(routingKey);
        int size = Math.min(shard.waiting.size(), maxSize);
        List<Pending> batch = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            batch.add(shard.waiting.pollFirst());
        }
        shard.inFlight.incrementAndGet();
        return batch;
    }

    /** A batch of the shard was settled (confirmed, refused or never sent). Any thread. */
    void settled(String routingKey) {
        shards.get(routingKey).inFlight.decrementAndGet();
    }

    /** Whether the shard has a batch in flight, so that a purchase for it waits for its confirm. Any thread. */
    boolean busy(String routingKey) {
        Shard shard = shards.get(routingKey);
        return shard != null && shard.inFlight.get() > 0;
    }

    /**
     * How many more purchases the fullest waiting batch needs to fill up (max-size when nothing
     * waits): fewer newcomers cannot make a busy shard's batch full. Sender thread.
     */
    int missingToFill() {
        int fullest = 0;
        for (Shard shard : shards.values()) {
            fullest = Math.max(fullest, shard.waiting.size());
        }
        return Math.max(1, maxSize - fullest);
    }

    /**
     * Nanoseconds from {@code now} to the earliest admission deadline of the purchases at the head
     * of each shard (its oldest); {@code Long.MAX_VALUE} when nothing waits. Sender thread.
     */
    long admissionLeft(long now) {
        long left = Long.MAX_VALUE;
        for (Shard shard : shards.values()) {
            Pending head = shard.waiting.peekFirst();
            if (head != null) {
                left = Math.min(left, head.admitByNanos() - now);
            }
        }
        return left;
    }

    /** Refuses, from the head of each shard, the purchases whose admission deadline has passed. Sender thread. */
    void refuseOverdue(long now, Supplier<PublishRefusedException> refusal) {
        PublishRefusedException refused = null;
        for (Shard shard : shards.values()) {
            while (!shard.waiting.isEmpty() && now - shard.waiting.peekFirst().admitByNanos() >= 0) {
                refused = refused == null ? refusal.get() : refused;
                shard.waiting.pollFirst().done().completeExceptionally(refused);
            }
        }
    }

    /** Refuses every waiting purchase. Sender thread. */
    void refuseAll(PublishRefusedException refused) {
        for (Shard shard : shards.values()) {
            for (Pending pending = shard.waiting.pollFirst(); pending != null; pending = shard.waiting.pollFirst()) {
                pending.done().completeExceptionally(refused);
            }
        }
    }
}
