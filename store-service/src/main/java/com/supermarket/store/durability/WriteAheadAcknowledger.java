package com.supermarket.store.durability;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.contract.Purchase;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Durable before ack. Each counted message becomes one write-ahead log record, appended (to
 * memory) on the consumer's thread; one flusher thread writes and fsyncs what gathered (group
 * commit: after {@code groupDelay} or {@code groupMessages} messages, or at once when the
 * previous fsync took longer) and then acknowledges, per channel, the highest delivery tag whose
 * record is durable, with {@code multiple}. A snapshot thread writes a full snapshot when the
 * log segment has grown past {@code snapshotLogSize} or {@code snapshotInterval} has passed, and
 * deletes what the previous snapshot made redundant.
 *
 * <h2>Why this is exact</h2>
 * Every message is logged with all its in-range purchases, duplicates included, and is
 * acknowledged only when its own record is durable, so an acknowledged purchase is always in a
 * durable record (replayed through the dedup window: once). A purchase is applied in memory
 * before its record is appended, and a snapshot starts by rolling the log, so every record of
 * the segments before a snapshot is in it. Records of its own segment that it also holds (a
 * store's purchases counted between the roll and the copy of the store's row, any number of them)
 * are skipped by position: each row saves how many bytes the segment held when it was copied,
 * and a record appended by then was counted by then. What is left, purchases counted before the
 * copy but appended after it (at most one message per consumer, not yet acknowledged), the dedup
 * window it saved skips, as it skips the redelivery of an unacknowledged message.
 *
 * <h2>Acks from another thread</h2>
 * Acks are sent on the consumer's raw amqp-client channel, as {@code ShardConsumers} hands it
 * over (not Spring's caching proxy, which would open a new channel if the old one had closed,
 * where the tag means nothing). amqp-client channels serialise every outgoing method, so an
 * ack from the flusher cannot interleave with what the consumer thread sends. A channel's
 * records are appended in delivery order by its one consumer thread, and the pending acks are
 * queued in log order under the append, so
 * acknowledging up to a tag with {@code multiple} never covers a message that is not durable;
 * messages rejected in between are already settled and not touched by it.
 *
 * <p>Thread-safe. A write or fsync that fails stops the process (after logging why): the
 * kernel may have dropped the unwritten pages, so the only exact state is the durable one, which
 * the restart recovers; the unacknowledged messages are redelivered.
 */
final class WriteAheadAcknowledger implements Acknowledger, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WriteAheadAcknowledger.class);

    private record PendingAck(Channel channel, long deliveryTag, long position) {
    }

    private final DurabilityProperties properties;
    private final StoreCounts counts;
    private final StateDirectory directory;
    private final CountsLog countsLog;
    private final Object pendingMonitor = new Object();
    // Guarded by pendingMonitor; in log-position order.
    private final ArrayDeque<PendingAck> pending = new ArrayDeque<>();
    private final Thread flusher;
    private final ScheduledExecutorService snapshotter;
    private final Timer flushes;
    private final DistributionSummary messagesPerFlush;
    private final Timer snapshots;
    private final Counter snapshotFailures;
    private volatile boolean running = true;
    // Guarded by this (snapshot() is synchronized) and written by the snapshot thread only.
    private long lastSnapshotNanos = System.nanoTime();
    private long nextAttemptNanos = lastSnapshotNanos;
    private int consecutiveFailures;
    /** The segment rolled for a snapshot that then failed, which the next attempt takes over; -1 if none. */
    private long unsnapshottedSegment = -1;

    private WriteAheadAcknowledger(DurabilityProperties properties, StoreCounts counts, StateDirectory directory,
                                   long firstSegment, MeterRegistry registry) throws IOException {
        this.properties = properties;
        this.counts = counts;
        this.directory = directory;
        this.countsLog = new CountsLog(directory, firstSegment);
        this.flushes = Timer.builder("store.journal.flush")
                .description("Write + fsync of one group of log records").register(registry);
        this.messagesPerFlush = DistributionSummary.builder("store.journal.flush.messages")
                .description("Messages acknowledged by one fsync").register(registry);
        this.snapshots = Timer.builder("store.snapshot.write")
                .description("Writing one full snapshot of the counts").register(registry);
        this.snapshotFailures = Counter.builder("store.snapshot.failures")
                .description("Snapshots that could not be written (retried with a growing delay)").register(registry);
        Gauge.builder("store.journal.pending.acks", this, WriteAheadAcknowledger::pendingAcks)
                .description("Counted messages waiting for their fsync").register(registry);
        this.flusher = Thread.ofPlatform().name("counts-log-flusher").daemon().unstarted(this::flushLoop);
        this.snapshotter = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("counts-snapshot").daemon().factory());
    }

    /** Recovers {@code counts} from the state directory, then starts logging after it. */
    static WriteAheadAcknowledger recover(DurabilityProperties properties, StoreCounts counts, MeterRegistry registry)
            throws IOException {
        StateDirectory directory = new StateDirectory(properties.stateDir().toAbsolutePath());
        Recovery.Result recovered = Recovery.recover(directory, counts);
        log.info("Recovered the counts from {} in {} ms: snapshot {} ({} ms), {} log segment(s), {} records, {} "
                        + "purchases added from the log, {} torn bytes dropped; logging to segment {}",
                directory.path(), recovered.millis(), recovered.snapshot() < 0 ? "none" : recovered.snapshot(),
                recovered.snapshotMillis(), recovered.segmentsReplayed(), recovered.recordsReplayed(), recovered.purchasesApplied(),
                recovered.tornBytesDropped(), recovered.nextSegment());
        Gauge.builder("store.recovery.duration", recovered, result -> result.millis() / 1000.0)
                .baseUnit("seconds").description("How long the last startup took to recover the counts").register(registry);
        WriteAheadAcknowledger acknowledger =
                new WriteAheadAcknowledger(properties, counts, directory, recovered.nextSegment(), registry);
        acknowledger.start();
        return acknowledger;
    }

    private void start() {
        flusher.start();
        snapshotter.scheduleWithFixedDelay(this::snapshotIfDue, 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public void acknowledge(Channel channel, long deliveryTag, List<Purchase> counted) {
        // Encoding outside the monitor keeps the serial part to a buffer copy.
        var frame = counted.isEmpty() ? null : LogRecords.encode(counted);
        synchronized (pendingMonitor) {
            long position = frame == null ? countsLog.appendedPosition() : countsLog.append(frame);
            pending.add(new PendingAck(channel, deliveryTag, position));
            if (pending.size() == 1 || pending.size() == properties.groupMessages()) {
                pendingMonitor.notifyAll();
            }
        }
    }

    private int pendingAcks() {
        synchronized (pendingMonitor) {
            return pending.size();
        }
    }

    private void flushLoop() {
        long groupDelayNanos = properties.groupDelay().toNanos();
        while (running) {
            try {
                synchronized (pendingMonitor) {
                    while (running && pending.isEmpty()) {
                        pendingMonitor.wait();
                    }
                    long deadline = System.nanoTime() + groupDelayNanos;
                    long left;
                    while (running && pending.size() < properties.groupMessages()
                            && (left = deadline - System.nanoTime()) > 0) {
                        TimeUnit.NANOSECONDS.timedWait(pendingMonitor, left);
                    }
                }
                flushAndAcknowledge();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void flushAndAcknowledge() {
        long durable;
        try {
            long started = System.nanoTime();
            durable = countsLog.flush();
            flushes.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        } catch (IOException | RuntimeException e) {
            failStop("writing or fsyncing the log in " + directory.path(), e);
            return;
        }
        acknowledgeUpTo(durable);
    }

    /** Acks, per channel, the highest tag whose record is at or before {@code durable}. */
    private void acknowledgeUpTo(long durable) {
        Map<Channel, Long> highestTag = new IdentityHashMap<>();
        int messages = 0;
        synchronized (pendingMonitor) {
            while (!pending.isEmpty() && pending.peekFirst().position() <= durable) {
                PendingAck ack = pending.pollFirst();
                highestTag.put(ack.channel(), ack.deliveryTag());
                messages++;
            }
        }
        if (messages == 0) {
            return;
        }
        messagesPerFlush.record(messages);
        highestTag.forEach((channel, tag) -> {
            try {
                channel.basicAck(tag, true);
            } catch (IOException | ShutdownSignalException e) {
                // The channel closed: the broker redelivers its unacknowledged messages, which are
                // durable already, so the dedup window skips them.
                log.debug("Could not acknowledge up to {} on a closed channel; the broker redelivers: {}", tag, e.toString());
            }
        });
    }

    private void snapshotIfDue() {
        long logged = countsLog.bytesInSegment();
        long now = System.nanoTime();
        boolean big = logged >= properties.snapshotLogSize().toBytes();
        boolean old = logged > 0 && now - lastSnapshotNanos >= properties.snapshotInterval().toNanos();
        if (running && (big || old) && now - nextAttemptNanos >= 0) {
            snapshot();
        }
    }

    /**
     * Rolls the log, writes a full snapshot and deletes what the previous snapshot made redundant.
     * One at a time: each row saves how far the new segment had got when it was copied, which
     * only means something while that segment is the current one. After a failure the next
     * attempt writes the snapshot of the segment already rolled (so failing attempts do not
     * pile up segments), and the check waits 1 s, then twice as long after each further
     * failure, up to {@code snapshotInterval}.
     */
    synchronized void snapshot() {
        long started = System.nanoTime();
        long number = unsnapshottedSegment;
        try {
            if (number < 0) {
                // The roll made everything appended so far durable; the flusher acknowledges it on
                // its next round (acks stay on that one thread, so each channel's acks go out in order).
                number = countsLog.roll();
                unsnapshottedSegment = number;
            }
        } catch (UncheckedIOException e) {
            failStop("writing or fsyncing the log in " + directory.path() + " before a snapshot", e);
            return;
        } catch (IOException | RuntimeException e) {
            failed(number, e);
            return;
        }
        try {
            long bytes = Snapshots.write(directory, number, counts, countsLog::bytesInSegment);
            unsnapshottedSegment = -1;
            consecutiveFailures = 0;
            lastSnapshotNanos = System.nanoTime();
            nextAttemptNanos = lastSnapshotNanos;
            long millis = (lastSnapshotNanos - started) / 1_000_000;
            snapshots.record(Duration.ofMillis(millis));
            log.info("Snapshot {} written: {} MiB in {} ms", number, bytes >> 20, millis);
            deleteRedundant();
        } catch (IOException | RuntimeException e) {
            failed(number, e);
        }
    }

    /** A snapshot attempt failed: counted, logged, the next one delayed. */
    private void failed(long number, Exception e) {
        // The log still holds everything, so nothing is lost: only the next restart replays more.
        snapshotFailures.increment();
        consecutiveFailures++;
        Duration delay = Duration.ofSeconds(1L << Math.min(consecutiveFailures - 1, 30));
        if (delay.compareTo(properties.snapshotInterval()) > 0) {
            delay = properties.snapshotInterval();
        }
        nextAttemptNanos = System.nanoTime() + delay.toNanos();
        log.error("Snapshot {} of the counts in {} failed ({} in a row; the log keeps growing until one succeeds); "
                + "retrying in {}: {}", number, directory.path(), consecutiveFailures, delay, e.toString(), e);
        if (number >= 0) {
            try {
                Files.deleteIfExists(directory.snapshotInProgress(number));
            } catch (IOException ignored) {
                // Removed at the next startup.
            }
        }
    }

    /**
     * Keeps the newest two snapshots and the log from the older of them on, so that if the
     * newest snapshot were ever damaged, the previous one and its log still rebuild the counts.
     */
    private void deleteRedundant() throws IOException {
        List<Long> snapshotNumbers = directory.snapshots();
        if (snapshotNumbers.size() < 2) {
            return;
        }
        long keepFrom = snapshotNumbers.get(snapshotNumbers.size() - 2);
        for (long number : snapshotNumbers) {
            if (number < keepFrom) {
                Files.deleteIfExists(directory.snapshot(number));
            }
        }
        for (long number : directory.segments()) {
            if (number < keepFrom) {
                Files.deleteIfExists(directory.segment(number));
            }
        }
        directory.sync();
    }

    private void failStop(String what, Throwable cause) {
        log.error("Stopping store-service: {} failed ({}). What was counted but not yet fsynced may be lost from "
                + "the disk, so the service stops without acknowledging it; the restart recovers the durable counts and "
                + "the broker redelivers the rest. Check the volume (full? read-only?).", what, cause.toString(), cause);
        Runtime.getRuntime().halt(74);
    }

    /** Stops the threads, then writes, fsyncs and acknowledges what is left (if the channels are still open). */
    @Override
    public void close() throws IOException, InterruptedException {
        running = false;
        snapshotter.shutdown();
        snapshotter.awaitTermination(1, TimeUnit.MINUTES);
        synchronized (pendingMonitor) {
            pendingMonitor.notifyAll();
        }
        flusher.join();
        acknowledgeUpTo(countsLog.flush());
        countsLog.close();
    }
}
