package com.supermarket.api.purchase;

import com.supermarket.api.purchase.PurchasePublisher.Pending;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The purchases waiting to be published, by store partition (what must stay together: the
 * stores one store-service partition counts), and the group commit's policy: which partition's
 * batch may leave now.
 *
 * <p>A partition's waiting purchases may leave at once when none of its batches is in flight,
 * and otherwise only once they fill a batch ({@code maxSize}); else they wait for its confirm
 * ({@link #mayLeave}). So nothing waits at a light load, and under load each partition sends one
 * batch per confirm round trip, holding what came during it: the broker's confirm latency paces
 * the batches and their size follows the load. Each batch cut is the partition's next turn, which
 * picks the shard queue it goes to ({@link Batch#turn}), so the partition's batches go round its
 * shard queues. Among the partitions that may send, the one holding the oldest purchase goes
 * first, so partitions that must share the in-flight permits take turns.
 *
 * <p>Thread-safety: the waiting purchases and the turns belong to the sender thread alone. Each
 * partition's count of batches in flight is atomic: the sender raises it as it cuts a batch
 * ({@link #cut}), the confirm callbacks lower it ({@link #settled}), request threads read it
 * ({@link #busy}) to know whether the sender has to be woken for their purchase. A partition,
 * once seen, stays in the map: partitions are a small fixed set.
 */
final class PartitionBatches {

    private final int maxSize;
    private final ConcurrentHashMap<Integer, Partition> partitions = new ConcurrentHashMap<>();

    private static final class Partition {
        /** Oldest first; sender thread only. */
        final ArrayDeque<Pending> waiting = new ArrayDeque<>();
        final AtomicInteger inFlight = new AtomicInteger();
        /** Batches cut so far; sender thread only. */
        long turns;
    }

    /**
     * A batch cut for publishing: its partition's purchases, oldest first, and which of the
     * partition's batches it is (0 for the first).
     */
    record Batch(int partition, long turn, List<Pending> purchases) {
    }

    PartitionBatches(int maxSize) {
        this.maxSize = maxSize;
    }

    /**
     * The policy: whether a partition's {@code waiting} purchases may leave as a batch while
     * {@code inFlight} of its batches await their confirms.
     */
    static boolean mayLeave(int waiting, int inFlight, int maxSize) {
        return waiting > 0 && (inFlight == 0 || waiting >= maxSize);
    }

    /** Adds a purchase to its partition's batch. Sender thread. */
    void add(Pending pending) {
        partitions.computeIfAbsent(pending.partition(), key -> new Partition()).waiting.addLast(pending);
    }

    /**
     * The partition whose batch may leave now, that of the oldest waiting purchase first; -1 when
     * none may. Sender thread.
     */
    int next() {
        int next = -1;
        long oldest = 0;
        for (var entry : partitions.entrySet()) {
            Partition partition = entry.getValue();
            if (mayLeave(partition.waiting.size(), partition.inFlight.get(), maxSize)) {
                long enqueued = partition.waiting.peekFirst().enqueuedNanos();
                if (next < 0 || enqueued - oldest < 0) {
                    next = entry.getKey();
                    oldest = enqueued;
                }
            }
        }
        return next;
    }

    /** Takes up to max-size purchases of the partition, oldest first, as its next batch, now in flight. Sender thread. */
    Batch cut(int index) {
        Partition partition = partitions.get(index);
        int size = Math.min(partition.waiting.size(), maxSize);
        List<Pending> purchases = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            purchases.add(partition.waiting.pollFirst());
        }
        partition.inFlight.incrementAndGet();
        return new Batch(index, partition.turns++, purchases);
    }

    /** A batch of the partition was settled (confirmed, refused or never sent). Any thread. */
    void settled(int index) {
        partitions.get(index).inFlight.decrementAndGet();
    }

    /** Whether the partition has a batch in flight, so that a purchase for it waits for its confirm. Any thread. */
    boolean busy(int index) {
        Partition partition = partitions.get(index);
        return partition != null && partition.inFlight.get() > 0;
    }

    /**
     * How many more purchases the fullest waiting batch needs to fill up (max-size when nothing
     * waits): fewer newcomers cannot make a busy partition's batch full. Sender thread.
     */
    int missingToFill() {
        int fullest = 0;
        for (Partition partition : partitions.values()) {
            fullest = Math.max(fullest, partition.waiting.size());
        }
        return Math.max(1, maxSize - fullest);
    }

    /**
     * Nanoseconds from {@code now} to the earliest admission deadline of the purchases at the head
     * of each partition (its oldest); {@code Long.MAX_VALUE} when nothing waits. Sender thread.
     */
    long admissionLeft(long now) {
        long left = Long.MAX_VALUE;
        for (Partition partition : partitions.values()) {
            Pending head = partition.waiting.peekFirst();
            if (head != null) {
                left = Math.min(left, head.admitByNanos() - now);
            }
        }
        return left;
    }

    /** Refuses, from the head of each partition, the purchases whose admission deadline has passed. Sender thread. */
    void refuseOverdue(long now, Supplier<PublishRefusedException> refusal) {
        PublishRefusedException refused = null;
        for (Partition partition : partitions.values()) {
            while (!partition.waiting.isEmpty() && now - partition.waiting.peekFirst().admitByNanos() >= 0) {
                refused = refused == null ? refusal.get() : refused;
                partition.waiting.pollFirst().done().completeExceptionally(refused);
            }
        }
    }

    /** Refuses every waiting purchase. Sender thread. */
    void refuseAll(PublishRefusedException refused) {
        for (Partition partition : partitions.values()) {
            for (Pending pending = partition.waiting.pollFirst(); pending != null; pending = partition.waiting.pollFirst()) {
                pending.done().completeExceptionally(refused);
            }
        }
    }
}
