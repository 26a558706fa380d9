package com.supermarket.store.durability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

/**
 * Hammer: consumers on several channels hand over messages concurrently while snapshots roll
 * the log; every ack must cover only messages whose record is already in a log file, go out in
 * increasing tag order per channel, and in the end cover every message; and the log must
 * rebuild the counts.
 */
class WriteAheadAcknowledgerTest {

    private static final int CHANNELS = 4;
    private static final int MESSAGES = 400;

    @TempDir
    Path dir;

    @Test
    void acknowledgesEachChannelInOrderAndOnlyWhatIsOnDisk() throws Exception {
        StoreCounts counts = new StoreCounts(8, 10, 1024);
        DurabilityProperties properties = new DurabilityProperties(true, dir, Duration.ofMillis(1), 50,
                DataSize.ofMegabytes(64), Duration.ofHours(1));
        WriteAheadAcknowledger acknowledger = WriteAheadAcknowledger.recover(properties, counts, new SimpleMeterRegistry());
        List<ConcurrentLinkedQueue<Long>> acks = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<Channel> channels = new ArrayList<>();
        for (int c = 0; c < CHANNELS; c++) {
            int channelNumber = c;
            ConcurrentLinkedQueue<Long> acked = new ConcurrentLinkedQueue<>();
            Channel channel = mock(Channel.class);
            doAnswer(call -> {
                long tag = call.getArgument(0);
                try {
                    assertThat((boolean) call.getArgument(1)).as("multiple").isTrue();
                    Set<UUID> logged = loggedIds();
                    for (long t = 1; t <= tag; t++) {
                        assertThat(logged).as("channel %d tag %d on disk when acking %d", channelNumber, t, tag)
                                .contains(id(channelNumber, t));
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
                acked.add(tag);
                return null;
            }).when(channel).basicAck(anyLong(), anyBoolean());
            acks.add(acked);
            channels.add(channel);
        }

        // First half with snapshots rolling the log; second half without, so that every id acked
        // then can only be on disk in the log (a snapshot holds the ids applied before it).
        consume(counts, acknowledger, channels, 1, MESSAGES / 2, true);
        consume(counts, acknowledger, channels, MESSAGES / 2 + 1, MESSAGES, false);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (ConcurrentLinkedQueue<Long> acked : acks) {
                assertThat(acked).isNotEmpty();
                assertThat(acked).last().isEqualTo((long) MESSAGES);
            }
        });
        acknowledger.close();
        assertThat(failures).isEmpty();
        for (ConcurrentLinkedQueue<Long> acked : acks) {
            assertThat(new ArrayList<>(acked)).isSorted().doesNotHaveDuplicates();
        }
        StoreCounts recovered = new StoreCounts(8, 10, 1024);
        Recovery.recover(new StateDirectory(dir), recovered);
        for (int store = 1; store <= 8; store++) {
            for (int item = 1; item <= 10; item++) {
                assertThat(recovered.count(store, item)).isEqualTo(counts.count(store, item));
            }
        }
        assertThat(recovered.count(1, 1)).isEqualTo(MESSAGES / 10);
        assertThat(recovered.purchases()).isEqualTo((long) CHANNELS * MESSAGES);
    }

    /**
     * A snapshot copies the stores one after the other while purchases keep coming; those of the
     * store copied last that arrive meanwhile are both in the snapshot and in the log segment
     * replayed after it, far more of them than the store's dedup window remembers. Recovery must
     * still count each once.
     */
    @Test
    void aSnapshotTakenDuringABurstCountsNothingTwiceAfterARestart() throws Exception {
        int stores = 64;
        int window = 8;
        StoreCounts counts = new StoreCounts(stores, 20_000, window);
        DurabilityProperties properties = new DurabilityProperties(true, dir, Duration.ofMillis(1), 50,
                DataSize.ofMegabytes(64), Duration.ofHours(1));
        WriteAheadAcknowledger acknowledger = WriteAheadAcknowledger.recover(properties, counts, new SimpleMeterRegistry());
        Channel channel = mock(Channel.class);
        AtomicLong tags = new AtomicLong();
        for (int store = 1; store <= stores; store++) {
            countAndAcknowledge(counts, acknowledger, channel, tags.incrementAndGet(), store);
        }
        AtomicBoolean bursting = new AtomicBoolean(true);
        // The burst hits the store whose row the snapshot copies last.
        Thread burst = Thread.ofPlatform().start(() -> {
            while (bursting.get()) {
                countAndAcknowledge(counts, acknowledger, channel, tags.incrementAndGet(), stores);
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> counts.purchases() > stores + 100);
        long before = counts.purchases();
        acknowledger.snapshot();
        long duringSnapshot = counts.purchases() - before;
        long after = counts.purchases();
        await().atMost(Duration.ofSeconds(10)).until(() -> counts.purchases() > after + 100);
        bursting.set(false);
        burst.join();
        acknowledger.close();

        assertThat(duringSnapshot).as("purchases of the last store counted while the snapshot was written")
                .isGreaterThan(4L * window);
        assertThat(new StateDirectory(dir).snapshots()).hasSize(1);
        StoreCounts recovered = new StoreCounts(stores, 20_000, window);
        Recovery.recover(new StateDirectory(dir), recovered);
        assertThat(recovered.purchases()).isEqualTo(counts.purchases());
        for (int item = 1; item <= 20_000; item++) {
            assertThat(recovered.count(stores, item)).as("item %d", item).isEqualTo(counts.count(stores, item));
        }
    }

    /**
     * Snapshots that keep failing (here the snapshot's temp path is a directory that cannot be
     * removed) are retried with a growing delay, counted, and do not start a new log segment
     * per attempt; once writing works again a snapshot is taken.
     */
    @Test
    void aSnapshotThatKeepsFailingBacksOffWithoutRollingTheLogOnEachAttempt() throws Exception {
        StoreCounts counts = new StoreCounts(8, 10, 1024);
        DurabilityProperties properties = new DurabilityProperties(true, dir, Duration.ofMillis(1), 50,
                DataSize.ofBytes(512), Duration.ofSeconds(2));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WriteAheadAcknowledger acknowledger = WriteAheadAcknowledger.recover(properties, counts, registry);
        StateDirectory state = new StateDirectory(dir);
        List<Path> blocked = new ArrayList<>();
        for (long number = 0; number < 50; number++) {
            Path temp = Files.createDirectory(state.snapshotInProgress(number));
            blocked.add(Files.createFile(temp.resolve("in-the-way")));
        }
        Channel channel = mock(Channel.class);
        AtomicLong tags = new AtomicLong();
        AtomicBoolean logging = new AtomicBoolean(true);
        Thread consumer = Thread.ofPlatform().start(() -> {
            while (logging.get()) {
                countAndAcknowledge(counts, acknowledger, channel, tags.incrementAndGet(), 1 + (int) (tags.get() % 8));
                LockSupport.parkNanos(1_000_000); // a steady trickle, so every check finds the segment grown
            }
        });
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> failedSnapshots(registry) >= 3 || state.segments().size() > 3);
            assertThat(state.segments()).as("log segments after %s failed snapshots", failedSnapshots(registry)).hasSize(2);
            assertThat(state.snapshots()).isEmpty();

            for (Path file : blocked) {
                Files.delete(file);
                Files.delete(file.getParent());
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> state.snapshots().size() == 1);
        } finally {
            logging.set(false);
            consumer.join();
            acknowledger.close();
        }
        StoreCounts recovered = new StoreCounts(8, 10, 1024);
        Recovery.recover(state, recovered);
        assertThat(recovered.purchases()).isEqualTo(counts.purchases());
    }

    private static double failedSnapshots(SimpleMeterRegistry registry) {
        var failures = registry.find("store.snapshot.failures").counter();
        return failures == null ? 0 : failures.count();
    }

    private static void countAndAcknowledge(StoreCounts counts, WriteAheadAcknowledger acknowledger, Channel channel,
                                            long tag, int store) {
        Purchase purchase = new Purchase(UUID.randomUUID(), store, 1, LocalDate.EPOCH,
                List.of(new PurchaseItem(1 + (int) (tag % counts.maxItemId()), 1)), Instant.EPOCH);
        counts.apply(purchase);
        acknowledger.acknowledge(channel, tag, List.of(purchase));
    }

    private static void consume(StoreCounts counts, WriteAheadAcknowledger acknowledger, List<Channel> channels,
                                long firstTag, long lastTag, boolean withSnapshots) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < CHANNELS; c++) {
            int channelNumber = c;
            threads.add(Thread.ofPlatform().start(() -> {
                for (long tag = firstTag; tag <= lastTag; tag++) {
                    Purchase purchase = new Purchase(id(channelNumber, tag), 1 + channelNumber, 1, LocalDate.EPOCH,
                            List.of(new PurchaseItem(1 + (int) (tag % 10), 1)), Instant.EPOCH);
                    counts.apply(purchase);
                    acknowledger.acknowledge(channels.get(channelNumber), tag, List.of(purchase));
                }
            }));
        }
        if (withSnapshots) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 5; i++) {
                    acknowledger.snapshot();
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
    }

    private static UUID id(int channel, long tag) {
        return new UUID(channel, tag);
    }

    /**
     * The purchase ids on disk now: in the log files (a torn tail is not read) and in the
     * snapshots' dedup windows (the log before a snapshot is deleted once a newer one exists).
     * Files deleted while being listed make it look again.
     */
    private Set<UUID> loggedIds() throws IOException {
        while (true) {
            try {
                Set<UUID> ids = new HashSet<>();
                StateDirectory state = new StateDirectory(dir);
                for (long segment : state.segments()) {
                    Frames.scan(state.segment(segment), (ByteBuffer payload, long start) -> {
                        int purchases = payload.getInt();
                        for (int p = 0; p < purchases; p++) {
                            ids.add(new UUID(payload.getLong(), payload.getLong()));
                            payload.getInt();
                            int lines = payload.getInt();
                            payload.position(payload.position() + lines * 2 * Integer.BYTES);
                        }
                    });
                }
                for (long snapshot : state.snapshots()) {
                    StoreCounts counts = new StoreCounts(8, 10, 1024);
                    Snapshots.load(state, snapshot, counts);
                    counts.snapshotTo((store, itemCounts, purchases, recent) -> ids.addAll(recent));
                }
                return ids;
            } catch (NoSuchFileException deletedMeanwhile) {
                // A snapshot made older files redundant while we read them.
            }
        }
    }
}
