package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.api.purchase.PurchasePublisher.Pending;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The group commit's policy, step by step on one thread: which partition's batch may leave when. */
class PartitionBatchesTest {

    private static final int MAX_SIZE = 3;

    private final PartitionBatches batches = new PartitionBatches(MAX_SIZE);
    private long clock;

    /** A purchase of {@code partition} enqueued now (each a nanosecond after the last), admitted for 100 ns. */
    private Pending pending(int partition) {
        clock++;
        return new Pending(partition, new byte[0], null, clock, clock + 100, null, new CompletableFuture<>());
    }

    private Pending add(int partition) {
        Pending pending = pending(partition);
        batches.add(pending);
        return pending;
    }

    private List<Pending> cut(int partition) {
        return batches.cut(partition).purchases();
    }

    @Test
    void aPartitionsPurchasesMayLeaveWhenNoneOfItsBatchesIsInFlightOrWhenTheyFillOne() {
        assertThat(PartitionBatches.mayLeave(0, 0, MAX_SIZE)).as("nothing waits").isFalse();
        assertThat(PartitionBatches.mayLeave(1, 0, MAX_SIZE)).as("idle partition: at once").isTrue();
        assertThat(PartitionBatches.mayLeave(2, 1, MAX_SIZE)).as("its batch in flight: wait for the confirm").isFalse();
        assertThat(PartitionBatches.mayLeave(MAX_SIZE, 1, MAX_SIZE)).as("a full batch does not wait").isTrue();
        assertThat(PartitionBatches.mayLeave(MAX_SIZE + 5, 4, MAX_SIZE)).isTrue();
    }

    @Test
    void whatGathersWhileAPartitionsBatchIsInFlightLeavesTogetherOnceItIsSettled() {
        Pending first = add(0);
        assertThat(batches.next()).isEqualTo(0);
        assertThat(cut(0)).containsExactly(first);
        assertThat(batches.busy(0)).isTrue();

        Pending second = add(0);
        Pending third = add(0);
        assertThat(batches.next()).as("0's batch awaits its confirm").isEqualTo(-1);
        Pending other = add(1);
        assertThat(batches.busy(1)).isFalse();
        assertThat(batches.next()).as("another partition sends at once").isEqualTo(1);
        assertThat(cut(1)).containsExactly(other);

        batches.settled(0);
        assertThat(batches.busy(0)).isFalse();
        assertThat(batches.next()).isEqualTo(0);
        assertThat(cut(0)).containsExactly(second, third);
        assertThat(batches.next()).isEqualTo(-1);
    }

    @Test
    void aFullBatchLeavesWhileItsPartitionIsBusyAndTheRestWaits() {
        batches.add(pending(0));
        batches.cut(0);
        List<Pending> gathered = List.of(add(0), add(0), add(0));
        Pending fourth = add(0);
        assertThat(batches.missingToFill()).as("the fullest batch is over-full").isEqualTo(1);

        assertThat(batches.next()).isEqualTo(0);
        assertThat(cut(0)).containsExactlyElementsOf(gathered);
        assertThat(batches.next()).as("one left, two batches in flight").isEqualTo(-1);
        assertThat(batches.missingToFill()).isEqualTo(MAX_SIZE - 1);

        batches.settled(0);
        assertThat(batches.next()).as("still one in flight").isEqualTo(-1);
        batches.settled(0);
        assertThat(cut(batches.next())).containsExactly(fourth);
    }

    @Test
    void thePartitionHoldingTheOldestPurchaseGoesFirst() {
        add(1);
        add(0);
        add(0);

        assertThat(batches.next()).isEqualTo(1);
        batches.cut(1);
        assertThat(batches.next()).isEqualTo(0);
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
        batches.settled(0);
        add(0);
        assertThat(batches.cut(0).turn()).isEqualTo(1);
        batches.settled(0);
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
        assertThat(batches.next()).isEqualTo(1);
        assertThat(batches.admissionLeft(clock)).isEqualTo(later.admitByNanos() - clock);
    }

    @Test
    void nothingWaitingMeansNoDeadlineAndAWholeBatchToFill() {
        assertThat(batches.admissionLeft(clock)).isEqualTo(Long.MAX_VALUE);
        assertThat(batches.missingToFill()).isEqualTo(MAX_SIZE);
        assertThat(batches.next()).isEqualTo(-1);
        assertThat(batches.busy(7)).isFalse();
    }
}
