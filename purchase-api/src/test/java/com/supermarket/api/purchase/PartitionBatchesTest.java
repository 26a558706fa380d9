package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.api.purchase.PurchasePublisher.Pending;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The group commit's policy, step by step on one thread with a clock in nanoseconds of the
 * test's own: which partition's batch may leave when.
 */
class PartitionBatchesTest {

    private static final int MAX_SIZE = 3;
    /** Lingering: at least 20 ns, 5 ns a purchase, at most 50 ns. */
    private static final PartitionBatches.Policy POLICY = new PartitionBatches.Policy(MAX_SIZE, 20, 5, 50);

    private final PartitionBatches batches = new PartitionBatches(POLICY);
    private long clock;

    /** A purchase of {@code partition} enqueued now (each a nanosecond after the last), admitted for 1,000 ns. */
    private static Pending pending(int partition, long now) {
        return new Pending(partition, new byte[0], null, now, now + 1000, null, new CompletableFuture<>());
    }

    private Pending add(int partition) {
        clock++;
        Pending pending = pending(partition, clock);
        batches.add(pending);
        return pending;
    }

    private List<Pending> cut(int partition) {
        return batches.cut(partition).purchases();
    }

    @Test
    void anIdlePartitionsPurchasesLeaveAtOnceALingeringBatchWhenItGatheredLongEnoughAndAFullOneAlways() {
        assertThat(POLICY.mayLeave(0, 0, false, 0)).as("nothing waits").isFalse();
        assertThat(POLICY.mayLeave(1, 0, false, 0)).as("idle partition: at once").isTrue();
        assertThat(POLICY.mayLeave(2, 1, true, 1000)).as("its batch in flight: wait for the confirm").isFalse();
        assertThat(POLICY.mayLeave(MAX_SIZE, 1, true, 0)).as("a full batch does not wait").isTrue();
        assertThat(POLICY.mayLeave(MAX_SIZE + 5, 4, true, 0)).isTrue();

        assertThat(POLICY.mayLeave(1, 0, true, 19)).as("confirmed, but gathered less than min").isFalse();
        assertThat(POLICY.mayLeave(1, 0, true, 20)).as("few purchases: min").isTrue();
        PartitionBatches.Policy larger = new PartitionBatches.Policy(100, 20, 5, 50);
        assertThat(larger.mayLeave(8, 0, true, 39)).as("8 purchases buy 40 ns").isFalse();
        assertThat(larger.mayLeave(8, 0, true, 40)).isTrue();
        assertThat(larger.mayLeave(30, 0, true, 49)).as("30 would buy 150 ns: capped at max").isFalse();
        assertThat(larger.mayLeave(30, 0, true, 50)).isTrue();
    }

    /**
     * The batch sizes the policy cuts from one partition's purchases, one every {@code gap} ns,
     * each batch confirmed {@code confirm} ns after it left, the sender looking every nanosecond;
     * {@code waits} gets how long each purchase waited to leave.
     */
    private static List<Integer> batchSizes(PartitionBatches.Policy policy, long gap, long confirm, int purchases,
                                            List<Long> waits) {
        PartitionBatches batches = new PartitionBatches(policy);
        List<Integer> sizes = new ArrayList<>();
        ArrayDeque<Long> confirms = new ArrayDeque<>();
        int arrived = 0;
        int left = 0;
        for (long now = 0; left < purchases; now++) {
            while (!confirms.isEmpty() && confirms.peekFirst() <= now) {
                confirms.pollFirst();
                batches.settled(0, now);
            }
            if (arrived < purchases && now == arrived * gap) {
                batches.add(pending(0, now));
                arrived++;
            }
            for (int partition = batches.next(now); partition >= 0; partition = batches.next(now)) {
                List<Pending> batch = batches.cut(partition).purchases();
                for (Pending pending : batch) {
                    waits.add(now - pending.enqueuedNanos());
                }
                sizes.add(batch.size());
                left += batch.size();
                confirms.addLast(now + confirm);
            }
        }
        return sizes;
    }

    /**
     * Purchases every 10 ns, a confirm in 100: cut at each confirm, a batch would hold the 10
     * that came during it. Faster than one per 40 ns (delay-per-purchase), each batch gathers
     * for max-delay (1,000 ns) instead, a tenth of the messages.
     */
    @Test
    void underAHeavyLoadABatchKeepsGatheringAfterItsConfirmUpToMaxDelay() {
        PartitionBatches.Policy policy = new PartitionBatches.Policy(500, 200, 40, 1000);
        List<Long> waits = new ArrayList<>();

        List<Integer> sizes = batchSizes(policy, 10, 100, 1000, waits);

        assertThat(sizes.getFirst()).as("the first purchase finds the partition idle").isEqualTo(1);
        assertThat(sizes.subList(1, sizes.size() - 1)).as("gathered from the first purchase after a cut for 1,000 ns")
                .isNotEmpty().containsOnly(101);
        assertThat(waits).allSatisfy(wait -> assertThat(wait).isLessThanOrEqualTo(1000));
    }

    /**
     * Purchases every 100 ns, slower than one per 40 ns: a batch leaves min-delay (200 ns) after
     * its first purchase came, once its confirm came, and no purchase waits longer for its batch.
     */
    @Test
    void underALightLoadABatchLeavesMinDelayAfterItsFirstPurchase() {
        PartitionBatches.Policy policy = new PartitionBatches.Policy(500, 200, 40, 1000);
        List<Long> waits = new ArrayList<>();

        List<Integer> sizes = batchSizes(policy, 100, 150, 30, waits);

        assertThat(sizes.getFirst()).isEqualTo(1);
        assertThat(sizes.subList(1, sizes.size() - 1)).isNotEmpty().containsOnly(3);
        assertThat(waits).allSatisfy(wait -> assertThat(wait).isLessThanOrEqualTo(200));
    }

    @Test
    void whatGathersWhileAPartitionsBatchIsInFlightLeavesTogetherOnceSettledAndLingered() {
        Pending first = add(0);
        assertThat(batches.next(clock)).isEqualTo(0);
        assertThat(cut(0)).containsExactly(first);
        assertThat(batches.busy(0)).isTrue();

        Pending second = add(0);
        long gatheringSince = clock;
        Pending third = add(0);
        assertThat(batches.next(clock)).as("0's batch awaits its confirm").isEqualTo(-1);
        Pending other = add(1);
        assertThat(batches.busy(1)).isFalse();
        assertThat(batches.next(clock)).as("another partition sends at once").isEqualTo(1);
        assertThat(cut(1)).containsExactly(other);

        batches.settled(0, clock);
        assertThat(batches.busy(0)).as("its batch lingers").isTrue();
        assertThat(batches.next(clock)).as("it lingers").isEqualTo(-1);
        assertThat(batches.lingerLeft(clock)).isEqualTo(gatheringSince + 20 - clock);
        clock = gatheringSince + 20;
        assertThat(batches.next(clock)).isEqualTo(0);
        assertThat(cut(0)).containsExactly(second, third);
        assertThat(batches.next(clock)).isEqualTo(-1);
        batches.settled(0, clock);
        assertThat(batches.busy(0)).as("idle again").isFalse();
        assertThat(batches.lingerLeft(clock)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aFullBatchLeavesWhileItsPartitionIsBusyAndTheRestLingers() {
        add(0);
        cut(0);
        List<Pending> gathered = List.of(add(0), add(0), add(0));
        Pending fourth = add(0);
        assertThat(batches.missingToFill()).as("the fullest batch is over-full").isEqualTo(1);

        assertThat(batches.next(clock)).isEqualTo(0);
        assertThat(cut(0)).containsExactlyElementsOf(gathered);
        long cutAt = clock;
        assertThat(batches.next(clock)).as("one left, two batches in flight").isEqualTo(-1);
        assertThat(batches.missingToFill()).isEqualTo(MAX_SIZE - 1);

        batches.settled(0, clock);
        assertThat(batches.next(clock)).as("still one in flight").isEqualTo(-1);
        batches.settled(0, clock);
        assertThat(batches.next(clock)).as("what was left lingers, from its oldest purchase").isEqualTo(-1);
        clock = cutAt + 20;
        assertThat(cut(batches.next(clock))).containsExactly(fourth);
    }

    /**
     * The sender parks while a partition's batch is in flight and takes what came meanwhile from
     * the queue only after the confirm woke it: what came before the confirm lingers all the same,
     * from when it came; what comes less than min-delay after it (a light batch's) lingers too, and
     * what comes later finds the partition idle.
     */
    @Test
    void aPurchaseThatCameBeforeTheConfirmLingersThoughTheSenderTookItAfter() {
        add(0);
        cut(0);
        Pending cameWhileInFlight = pending(0, ++clock);
        clock += 5;
        batches.settled(0, clock);

        batches.add(cameWhileInFlight);

        assertThat(batches.next(clock)).isEqualTo(-1);
        assertThat(batches.lingerLeft(clock)).isEqualTo(cameWhileInFlight.enqueuedNanos() + 20 - clock);
        clock = cameWhileInFlight.enqueuedNanos() + 20;
        assertThat(cut(batches.next(clock))).containsExactly(cameWhileInFlight);
        batches.settled(0, clock);
        Pending soonAfter = pending(0, clock + 19);
        clock = soonAfter.enqueuedNanos();
        batches.add(soonAfter);
        assertThat(batches.next(clock)).as("less than min after the confirm: not yet idle, it lingers").isEqualTo(-1);
        clock += 20;
        assertThat(cut(batches.next(clock))).containsExactly(soonAfter);
        batches.settled(0, clock);
        Pending cameAfter = pending(0, clock + 20);
        clock = cameAfter.enqueuedNanos();
        batches.add(cameAfter);
        assertThat(batches.next(clock)).as("min after the confirm: idle, at once").isEqualTo(0);
    }

    @Test
    void afterALightBatchAPartitionIsIdleOnlyOnceItHasHadNothingInFlightForMinDelay() {
        PartitionBatches.Policy policy = new PartitionBatches.Policy(10, 20, 5, 50);
        assertThat(policy.lingers(1, 1000, 10)).as("a batch in flight").isTrue();
        assertThat(policy.lingers(0, -1, 10)).as("came before the last confirm").isTrue();
        assertThat(policy.lingers(0, 19, 3)).as("less than min after a light batch's confirm").isTrue();
        assertThat(policy.lingers(0, 20, 3)).as("min after it: idle").isFalse();
        assertThat(policy.lingers(0, 0, 4)).as("after a heavy batch (4 x 5 = min): idle at its confirm").isFalse();
        assertThat(POLICY.lingers(0, 0, MAX_SIZE)).as("after a full batch: idle at its confirm").isFalse();
        assertThat(cut(batches.next(add(7).enqueuedNanos()))).as("a partition never seen is idle").hasSize(1);
    }

    /** A closed loop's tills answered by a heavy batch come back at once: the first of them goes ahead. */
    @Test
    void aPurchaseThatComesRightAfterAHeavyBatchsConfirmLeavesAtOnce() {
        for (int i = 0; i < MAX_SIZE; i++) {
            add(0);
        }
        assertThat(cut(batches.next(clock))).hasSize(MAX_SIZE);
        batches.settled(0, ++clock);
        Pending next = add(0);

        assertThat(cut(batches.next(next.enqueuedNanos()))).containsExactly(next);
    }

    @Test
    void thePartitionHoldingTheOldestPurchaseGoesFirst() {
        add(1);
        add(0);
        add(0);

        assertThat(batches.next(clock)).isEqualTo(1);
        cut(1);
        assertThat(batches.next(clock)).isEqualTo(0);
    }

    /** Each batch of a partition is its next turn, which picks the next of its shard queues. */
    @Test
    void aPartitionsBatchesAreNumberedInTurnAndEachPartitionHasItsOwnTurns() {
        add(0);
        assertThat(batches.cut(0).turn()).isZero();
        add(1);
        PartitionBatches.Batch other = batches.cut(1);
        assertThat(other.turn()).isZero();
        assertThat(other.partition()).isEqualTo(1);
        batches.settled(0, clock);
        add(0);
        assertThat(batches.cut(0).turn()).isEqualTo(1);
        batches.settled(0, clock);
        add(0);
        assertThat(batches.cut(0).turn()).isEqualTo(2);
    }

    @Test
    void purchasesPastTheirAdmissionDeadlineAreRefusedAndTheNextDeadlineIsKnown() {
        Pending early = add(0);
        clock += 50;
        Pending later = add(1);
        assertThat(batches.admissionLeft(clock)).isEqualTo(early.admitByNanos() - clock);

        batches.refuseOverdue(early.admitByNanos(), () -> new PublishRefusedException(Reason.OVERLOADED, "overloaded", null));

        assertThat(early.done()).isCompletedExceptionally();
        assertThat(later.done()).isNotDone();
        assertThat(batches.next(clock)).isEqualTo(1);
        assertThat(batches.admissionLeft(clock)).isEqualTo(later.admitByNanos() - clock);
    }

    @Test
    void aLingeringBatchRefusedWhileWaitingLeavesItsPartitionIdle() {
        add(0);
        cut(0);
        Pending lingering = add(0);
        assertThat(batches.busy(0)).isTrue();
        batches.settled(0, clock);
        assertThat(batches.busy(0)).isTrue();

        batches.refuseOverdue(lingering.admitByNanos(), () -> new PublishRefusedException(Reason.OVERLOADED, "overloaded", null));

        assertThat(batches.busy(0)).as("a newcomer must wake the sender").isFalse();
        assertThat(batches.lingerLeft(clock)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void nothingWaitingMeansNoDeadlineAndAWholeBatchToFill() {
        assertThat(batches.admissionLeft(clock)).isEqualTo(Long.MAX_VALUE);
        assertThat(batches.lingerLeft(clock)).isEqualTo(Long.MAX_VALUE);
        assertThat(batches.missingToFill()).isEqualTo(MAX_SIZE);
        assertThat(batches.next(clock)).isEqualTo(-1);
        assertThat(batches.busy(7)).isFalse();
    }
}
