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
 * <p>A purchase of an idle partition (none of its batches in flight, none waiting; after a light
 * batch, none in flight for {@code min}: {@link Policy#lingers}) may leave at once, so nothing
 * waits long at a light load. The purchases that come while one of the partition's batches is in
 * flight, or less than {@code min} after a light batch's confirm, gather: they wait for the
 * confirm, and then linger ({@link Policy}) for as long as company keeps coming, so that under
 * load a partition sends few, large batches (each message costs the broker, the consumers and
 * Redis far more than a purchase in it). A full batch ({@code maxSize}) never waits. Each batch
 * cut is the partition's next turn, which picks the shard queue it goes to ({@link Batch#turn}),
 * so the partition's batches go round its shard queues. Among the partitions that may send, the
 * one holding the oldest purchase goes first, so partitions that must share the in-flight permits
 * take turns.
 *
 * <p>A purchase's time is when its request handed it over ({@link Pending#enqueuedNanos}): the
 * sender may take it from the queue only after the confirm that woke it, and a keyed purchase
 * reaches the queue after its key's claim. A batch lingers when its first purchase came before
 * its partition's last confirm, or less than {@code min} after a light batch's (or while a batch
 * of it is still in flight), and gathers from its oldest purchase.
 *
 * <p>Thread-safety: the waiting purchases, when they began to gather and the turns belong to the
 * sender thread alone. Each partition's count of batches in flight is atomic: the sender raises
 * it as it cuts a batch ({@link #cut}), the confirm callbacks lower it and note when
 * ({@link #settled}, volatile). Whether its waiting batch lingers is volatile, written by the
 * sender. Request threads read it and the count ({@link #busy}) to know whether the sender has
 * to be woken for their purchase. A partition, once seen, stays in the map: partitions are a
 * small fixed set. Times are {@link System#nanoTime} values.
 */
final class PartitionBatches {

    private final Policy policy;
    private final ConcurrentHashMap<Integer, Partition> partitions = new ConcurrentHashMap<>();

    private static final class Partition {
        /** Oldest first; sender thread only. */
        final ArrayDeque<Pending> waiting = new ArrayDeque<>();
        final AtomicInteger inFlight = new AtomicInteger();
        /** Whether the waiting batch began while the partition was not idle ({@link Policy#lingers}), and so lingers. */
        volatile boolean lingering;
        /** When the last batch of the partition was settled. */
        volatile long lastSettled;
        /** When the oldest purchase of the waiting batch came; sender thread only. */
        long gatheringSince;
        /** How many purchases the last batch cut held; sender thread only. */
        int lastBatch;
        /** Batches cut so far; sender thread only. */
        long turns;

        Partition(long now) {
            lastSettled = now;
        }
    }

    /**
     * When a partition's batch may leave. A lingering batch (one that began while a batch of its
     * partition was in flight) leaves, once none of the partition's batches is in flight, when it
     * has gathered for {@code perPurchase} times the purchases it holds, at least {@code min} and
     * at most {@code max}: it keeps gathering while purchases come faster than one per
     * {@code perPurchase} (a heavy load, where it grows to max-size or max), and leaves soon after
     * its confirm when they come slower (a light load pays at most {@code min}). A full batch
     * ({@code maxSize}) leaves at once; a batch that is not lingering leaves once nothing of its
     * partition is in flight.
     *
     * @param maxSize     most purchases in one batch
     * @param min         least a lingering batch gathers, in nanoseconds
     * @param perPurchase what each purchase of a lingering batch adds to its gathering, in nanoseconds
     * @param max         most a lingering batch gathers, in nanoseconds (a full batch leaves sooner)
     */
    record Policy(int maxSize, long min, long perPurchase, long max) {

        static Policy of(PublishProperties.Batch settings) {
            return new Policy(settings.maxSize(), settings.minDelay().toNanos(), settings.delayPerPurchase().toNanos(),
                    settings.maxDelay().toNanos());
        }

        /**
         * Whether a batch whose first purchase came {@code sinceSettled} nanoseconds after its
         * partition's last confirm (negative: before it), while {@code inFlight} of the partition's
         * batches await theirs, lingers. After a light batch (not full, and of fewer purchases than
         * {@code min / perPurchase}, those a heavy load gathers in {@code min}) a partition is idle,
         * and its purchase leaves at once, only once it has had nothing in flight for {@code min}:
         * at a light load the next purchases come one by one soon after each confirm. After a heavy
         * batch it is idle as soon as its confirm came: the purchases of a closed loop's tills come
         * in bursts behind the confirms that answered them, and the first of a burst goes ahead.
         */
        boolean lingers(int inFlight, long sinceSettled, int lastBatch) {
            return inFlight > 0 || sinceSettled < 0 || sinceSettled < min && lastBatch < maxSize && lastBatch * perPurchase < min;
        }

        /** How long a lingering batch of {@code waiting} purchases gathers. */
        long gathering(int waiting) {
            return Math.max(min, Math.min(max, perPurchase * waiting));
        }

        /**
         * Whether a partition's {@code waiting} purchases may leave as a batch while {@code inFlight}
         * of its batches await their confirms, the batch {@code lingering} or not and gathering
         * for {@code gathered} nanoseconds so far.
         */
        boolean mayLeave(int waiting, int inFlight, boolean lingering, long gathered) {
            return waiting > 0 && (waiting >= maxSize || inFlight == 0 && (!lingering || gathered >= gathering(waiting)));
        }
    }

    /**
     * A batch cut for publishing: its partition's purchases, oldest first, and which of the
     * partition's batches it is (0 for the first).
     */
    record Batch(int partition, long turn, List<Pending> purchases) {
    }

    PartitionBatches(Policy policy) {
        this.policy = policy;
    }

    /** Adds a purchase to its partition's batch. Sender thread. */
    void add(Pending pending) {
        long came = pending.enqueuedNanos();
        Partition partition = partitions.get(pending.partition());
        if (partition == null) {
            partition = new Partition(came - policy.min());
            partitions.put(pending.partition(), partition);
        }
        if (partition.waiting.isEmpty()) {
            partition.gatheringSince = came;
            partition.lingering = policy.lingers(partition.inFlight.get(), came - partition.lastSettled, partition.lastBatch);
        } else if (came - partition.gatheringSince < 0) {
            partition.gatheringSince = came;
        }
        partition.waiting.addLast(pending);
    }

    private boolean mayLeave(Partition partition, long now) {
        return policy.mayLeave(partition.waiting.size(), partition.inFlight.get(), partition.lingering,
                now - partition.gatheringSince);
    }

    /**
     * The partition whose batch may leave at {@code now}, that of the oldest waiting purchase
     * first; -1 when none may. Sender thread.
     */
    int next(long now) {
        int next = -1;
        long oldest = 0;
        for (var entry : partitions.entrySet()) {
            Partition partition = entry.getValue();
            if (mayLeave(partition, now)) {
                long enqueued = partition.waiting.peekFirst().enqueuedNanos();
                if (next < 0 || enqueued - oldest < 0) {
                    next = entry.getKey();
                    oldest = enqueued;
                }
            }
        }
        return next;
    }

    /**
     * Takes up to max-size purchases of the partition, oldest first, as its next batch, now in
     * flight; what is left begins the next batch, lingering. Sender thread.
     */
    Batch cut(int index) {
        Partition partition = partitions.get(index);
        int size = Math.min(partition.waiting.size(), policy.maxSize());
        List<Pending> purchases = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            purchases.add(partition.waiting.pollFirst());
        }
        partition.inFlight.incrementAndGet();
        partition.lastBatch = size;
        partition.lingering = !partition.waiting.isEmpty();
        if (partition.lingering) {
            long oldest = partition.waiting.peekFirst().enqueuedNanos();
            for (Pending pending : partition.waiting) {
                oldest = pending.enqueuedNanos() - oldest < 0 ? pending.enqueuedNanos() : oldest;
            }
            partition.gatheringSince = oldest;
        }
        return new Batch(index, partition.turns++, purchases);
    }

    /** A batch of the partition was settled (confirmed, refused or never sent) at {@code now}. Any thread. */
    void settled(int index, long now) {
        Partition partition = partitions.get(index);
        partition.lastSettled = now;
        partition.inFlight.decrementAndGet();
    }

    /**
     * Whether a purchase for the partition waits (a batch of it in flight, or its batch
     * lingering), so that it need not wake the sender. Any thread.
     */
    boolean busy(int index) {
        Partition partition = partitions.get(index);
        return partition != null && (partition.inFlight.get() > 0 || partition.lingering);
    }

    /**
     * Nanoseconds from {@code now} until the first batch that waits only for its linger to end
     * (none of its partition's batches in flight, not full) may leave; {@code Long.MAX_VALUE}
     * when none does. Sender thread.
     */
    long lingerLeft(long now) {
        long left = Long.MAX_VALUE;
        for (Partition partition : partitions.values()) {
            int waiting = partition.waiting.size();
            if (waiting > 0 && waiting < policy.maxSize() && partition.lingering && partition.inFlight.get() == 0) {
                long until = partition.gatheringSince + policy.gathering(waiting) - now;
                if (until > 0) {
                    left = Math.min(left, until);
                }
            }
        }
        return left;
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
        return Math.max(1, policy.maxSize() - fullest);
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
            if (partition.waiting.isEmpty()) {
                partition.lingering = false;
            }
        }
    }

    /** Refuses every waiting purchase. Sender thread. */
    void refuseAll(PublishRefusedException refused) {
        for (Partition partition : partitions.values()) {
            for (Pending pending = partition.waiting.pollFirst(); pending != null; pending = partition.waiting.pollFirst()) {
                pending.done().completeExceptionally(refused);
            }
            partition.lingering = false;
        }
    }
}
