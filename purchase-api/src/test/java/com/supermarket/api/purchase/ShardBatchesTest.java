package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.api.purchase.PurchasePublisher.Pending;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The group commit's policy, step by step on one thread: which shard's batch may leave when. */
class ShardBatchesTest {

    private static final int MAX_SIZE = 3;

    private final ShardBatches batches = new ShardBatches(MAX_SIZE);
    private long clock;

    /** A purchase of {@code shard} enqueued now (each a nanosecond after the last), admitted for 100 ns. */
    private Pending pending(String shard) {
        clock++;
        return new Pending(shard, new byte[0], null, clock, clock + 100, null, new CompletableFuture<>());
    }

    private Pending add(String shard) {
        Pending pending = pending(shard);
        batches.add(pending);
        return pending;
    }

    @Test
    void aShardsPurchasesMayLeaveWhenNoneOfItsBatchesIsInFlightOrWhenTheyFillOne() {
        assertThat(ShardBatches.mayLeave(0, 0, MAX_SIZE)).as("nothing waits").isFalse();
        assertThat(ShardBatches.mayLeave(1, 0, MAX_SIZE)).as("idle shard: at once").isTrue();
        assertThat(ShardBatches.mayLeave(2, 1, MAX_SIZE)).as("its batch in flight: wait for the confirm").isFalse();
        assertThat(ShardBatches.mayLeave(MAX_SIZE, 1, MAX_SIZE)).as("a full batch does not wait").isTrue();
        assertThat(ShardBatches.mayLeave(MAX_SIZE + 5, 4, MAX_SIZE)).isTrue();
    }

    @Test
    void whatGathersWhileAShardsBatchIsInFlightLeavesTogetherOnceItIsSettled() {
        Pending first = add("a");
        assertThat(batches.next()).isEqualTo("a");
        assertThat(batches.cut("a")).containsExactly(first);
        assertThat(batches.busy("a")).isTrue();

        Pending second = add("a");
        Pending third = add("a");
        assertThat(batches.next()).as("a's batch awaits its confirm").isNull();
        Pending other = add("b");
        assertThat(batches.busy("b")).isFalse();
        assertThat(batches.next()).as("another shard sends at once").isEqualTo("b");
        assertThat(batches.cut("b")).containsExactly(other);

        batches.settled("a");
        assertThat(batches.busy("a")).isFalse();
        assertThat(batches.next()).isEqualTo("a");
        assertThat(batches.cut("a")).containsExactly(second, third);
        assertThat(batches.next()).isNull();
    }

    @Test
    void aFullBatchLeavesWhileItsShardIsBusyAndTheRestWaits() {
        batches.add(pending("a"));
        batches.cut("a");
        List<Pending> gathered = List.of(add("a"), add("a"), add("a"));
        Pending fourth = add("a");
        assertThat(batches.missingToFill()).as("the fullest batch is over-full").isEqualTo(1);

        assertThat(batches.next()).isEqualTo("a");
        assertThat(batches.cut("a")).containsExactlyElementsOf(gathered);
        assertThat(batches.next()).as("one left, two batches in flight").isNull();
        assertThat(batches.missingToFill()).isEqualTo(MAX_SIZE - 1);

        batches.settled("a");
        assertThat(batches.next()).as("still one in flight").isNull();
        batches.settled("a");
        assertThat(batches.cut(batches.next())).containsExactly(fourth);
    }

    @Test
    void theShardHoldingTheOldestPurchaseGoesFirst() {
        add("b");
        add("a");
        add("a");

        assertThat(batches.next()).isEqualTo("b");
        batches.cut("b");
        assertThat(batches.next()).isEqualTo("a");
    }

    @Test
    void purchasesPastTheirAdmissionDeadlineAreRefusedAndTheNextDeadlineIsKnown() {
        Pending early = add("a");
        clock += 50;
        Pending later = add("b");
        assertThat(batches.admissionLeft(clock)).isEqualTo(early.admitByNanos() - clock);

        batches.refuseOverdue(early.admitByNanos(), () -> new PublishRefusedException(Reason.OVERLOADED, "overloaded", null));

        assertThat(early.done()).isCompletedExceptionally();
        assertThat(later.done()).isNotDone();
        assertThat(batches.next()).isEqualTo("b");
        assertThat(batches.admissionLeft(clock)).isEqualTo(later.admitByNanos() - clock);
    }

    @Test
    void nothingWaitingMeansNoDeadlineAndAWholeBatchToFill() {
        assertThat(batches.admissionLeft(clock)).isEqualTo(Long.MAX_VALUE);
        assertThat(batches.missingToFill()).isEqualTo(MAX_SIZE);
        assertThat(batches.next()).isNull();
        assertThat(batches.busy("never seen")).isFalse();
    }
}
