package com.supermarket.purchases.ingest;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Group writes: the messages of every shard consumer are stored together, one
 * {@link BatchWriter#write} (one transaction) for all that gathered, since most of a write's cost
 * is per transaction, not per purchase. A consumer thread hands its decoded message over
 * ({@link #submit}) and returns at once, so its prefetch keeps messages coming; one writer thread
 * takes every message waiting once the first of them is {@code groupDelay} old or
 * {@code groupMessages} wait (at once when they gathered during a write that took longer than
 * the delay), writes their purchases in one call, then settles each message in arrival order.
 *
 * <p>Failures are settled as for a message written alone (docs/architecture.md, "purchases-service:
 * writes, and whose fault a failed write is"): a store fault holds the whole group, unacknowledged,
 * and the messages arriving meanwhile join it ({@link BatchWriter}); consumers stop getting
 * deliveries once their prefetch is used up. A purchase proven bad is parked by its own message.
 * An unexpected error requeues every message of the group after the backoff, each counting its
 * own attempts, and rejects a message to the parking queue at its {@code maxAttemptsOnError}-th.
 *
 * <p>A message with something to park (a poison element, a purchase proven bad) is parked on a
 * thread of its own: a park can wait for a broker alarm (up to its timeout), and only its
 * own shard may wait with it. {@link InOrderAcks} keeps each channel's acknowledgements in
 * delivery order, so a {@code multiple} ack never covers a message still writing or parking;
 * each channel is acknowledged once per group, up to its highest settled tag.
 *
 * <p>Stopped before the shard consumers (they stop at {@code ShardConsumers.PHASE}, a lower phase):
 * a write waiting for the store gives up and requeues its messages, messages still waiting are left
 * to their channels' close (the broker redelivers them), and nothing unwritten is acknowledged.
 *
 * <p>Thread-safe: consumer threads only append to the waiting queue (and register with
 * {@link InOrderAcks}) under its monitor; the writer thread takes from it under the same monitor
 * and does everything else, apart from parks, which settle through {@link InOrderAcks}
 * (thread-safe) and count their failures in a concurrent map, as the writer does.
 */
@Component
class GroupWriter implements SmartLifecycle {

    /**
     * A decoded message handed to the writer. Its consumer keeps what it needs to park and trace it;
     * the writer stores its purchases and settles its channel.
     */
    interface Delivery {

        /** Its purchases to store (poison elements left out). */
        List<Purchase> purchases();

        /** Whether settling it parks anything: a poison element, or one of its purchases among {@code refused}. */
        boolean parks(Set<UUID> refused);

        /**
         * Called once its purchases are written: parks its poison elements and those of its purchases
         * among {@code refused}, each with the broker's confirm, before the message is acknowledged.
         *
         * @throws Exception when a park failed: the message is then requeued like one failing unexpectedly
         */
        void settle(Set<UUID> refused) throws Exception;

        /** The message's body, which names it across redeliveries (counting unexpected failures). */
        byte[] body();
    }

    private record Waiting(Delivery delivery, InOrderAcks.Delivery ack, long arrivedNanos) {
    }

    private static final Logger log = LoggerFactory.getLogger(GroupWriter.class);
    /** Messages whose unexpected failures are remembered; older ones start counting afresh. */
    private static final int REMEMBERED_FAILURES = 1024;

    private final BatchWriter writer;
    private final InOrderAcks acks = new InOrderAcks();
    private final long groupDelayNanos;
    private final int groupMessages;
    private final int maxAttemptsOnError;
    private final Map<Long, Integer> attemptsOnError = new ConcurrentHashMap<>();
    // Platform threads: a park waits for its confirm in a monitor, which pins a virtual thread's carrier on JDK 21.
    private final ExecutorService parks = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("purchases-park-", 0).daemon().factory());
    private final Counter errors;
    private final DistributionSummary messagesPerWrite;
    private final Object monitor = new Object();
    // Guarded by monitor; in arrival order.
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    // Both guarded by monitor.
    private boolean stopped;
    private Thread thread;
    /** How long the previous write took; the writer thread's own. */
    private long previousWriteNanos;

    GroupWriter(BatchWriter writer, IngestProperties properties, MeterRegistry registry) {
        this.writer = writer;
        this.groupDelayNanos = properties.groupDelay().toNanos();
        this.groupMessages = properties.groupMessages();
        this.maxAttemptsOnError = properties.maxAttemptsOnError();
        this.errors = Counter.builder("purchases.errors")
                .description("Deliveries requeued (or finally parked) after an unexpected error").register(registry);
        this.messagesPerWrite = DistributionSummary.builder("purchases.write.messages")
                .description("Messages stored by one write").baseUnit("messages").register(registry);
    }

    /**
     * Hands over {@code delivery}, which came on {@code channel} with {@code tag}; returns at once.
     * Called by the channel's consumer thread, in delivery order. Once stopped, the delivery is
     * left unacknowledged: the broker redelivers it when the channel closes.
     */
    void submit(Channel channel, long tag, Delivery delivery) {
        synchronized (monitor) {
            if (stopped) {
                log.debug("Stopping: leaving delivery {} to the broker", tag);
                return;
            }
            // Registered only when accepted: one left to the broker has a higher tag than every
            // registered delivery of its channel, so no ack covers it.
            waiting.add(new Waiting(delivery, acks.expect(channel, tag), System.nanoTime()));
            if (waiting.size() == 1 || waiting.size() == groupMessages) {
                monitor.notifyAll();
            }
        }
    }

    private void writeLoop() {
        try {
            for (List<Waiting> group = nextGroup(); group != null; group = nextGroup()) {
                write(group);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        int left;
        synchronized (monitor) {
            left = waiting.size();
        }
        if (left > 0) {
            log.info("Stopping: {} message(s) not written are left to the broker, which redelivers them", left);
        }
    }

    /** The next group, once due; null when stopping. */
    private List<Waiting> nextGroup() throws InterruptedException {
        synchronized (monitor) {
            // Behind: messages gathered during a write longer than the delay; waiting more only adds to it.
            boolean behind = !waiting.isEmpty() && previousWriteNanos > groupDelayNanos;
            while (!stopped && waiting.isEmpty()) {
                monitor.wait();
            }
            long left;
            while (!stopped && !behind && waiting.size() < groupMessages
                    && (left = waiting.peekFirst().arrivedNanos() + groupDelayNanos - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(monitor, left);
            }
            return stopped ? null : takeWaiting();
        }
    }

    // Called under monitor.
    private List<Waiting> takeWaiting() {
        List<Waiting> taken = new ArrayList<>(waiting);
        waiting.clear();
        return taken;
    }

    /** The messages that arrived while {@code group} is held join it; returns their purchases. */
    private List<Purchase> join(List<Waiting> group) {
        List<Waiting> arrived;
        synchronized (monitor) {
            arrived = takeWaiting();
        }
        group.addAll(arrived);
        return purchasesOf(arrived);
    }

    private void write(List<Waiting> group) {
        List<Purchase> purchases = purchasesOf(group);
        Set<UUID> refused;
        long started = System.nanoTime();
        try {
            refused = purchases.isEmpty() ? Set.of() : writer.write(purchases, () -> join(group));
        } catch (InterruptedException e) {
            group.forEach(each -> acks.requeue(each.ack()));
            log.info("Stopping: requeued {} message(s) whose write was waiting for the store", group.size());
            return;
        } catch (RuntimeException | Error e) {
            requeueOrReject(group, e);
            return;
        } finally {
            previousWriteNanos = System.nanoTime() - started;
        }
        messagesPerWrite.record(group.size());
        settleWritten(group, refused);
    }

    /**
     * Settles each message of a written group in arrival order: those that park on threads of
     * their own, the others here, acknowledged together (once per channel).
     */
    private void settleWritten(List<Waiting> group, Set<UUID> refused) {
        List<InOrderAcks.Delivery> settled = new ArrayList<>(group.size());
        for (Waiting each : group) {
            if (each.delivery().parks(refused)) {
                parks.execute(() -> settleOnItsOwn(each, refused));
            } else if (trySettle(each, refused)) {
                settled.add(each.ack());
            }
        }
        acks.acknowledge(settled);
    }

    /** Settles one message that parks something, on its own thread; acknowledges it unless that failed. */
    private void settleOnItsOwn(Waiting delivery, Set<UUID> refused) {
        if (trySettle(delivery, refused)) {
            acks.acknowledge(List.of(delivery.ack()));
        }
    }

    /** Lets {@code delivery} park what it must; false if that failed (it is requeued or rejected then). */
    private boolean trySettle(Waiting delivery, Set<UUID> refused) {
        try {
            delivery.delivery().settle(refused);
        } catch (InterruptedException e) {
            acks.requeue(delivery.ack());
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            requeueOrReject(List.of(delivery), e);
            return false;
        }
        if (!attemptsOnError.isEmpty()) {
            attemptsOnError.remove(key(delivery.delivery().body()));
        }
        return true;
    }

    /**
     * After an unexpected error: rejects each message of {@code failed} at its last attempt, and
     * requeues the others after the backoff of the most-tried among them.
     */
    private void requeueOrReject(List<Waiting> failed, Throwable failure) {
        errors.increment(failed.size());
        if (attemptsOnError.size() > REMEMBERED_FAILURES) {
            attemptsOnError.clear(); // bounded memory; a forgotten message merely starts counting again
        }
        List<Waiting> requeued = new ArrayList<>(failed.size());
        int attempt = 0;
        for (Waiting each : failed) {
            long key = key(each.delivery().body());
            int attempts = attemptsOnError.merge(key, 1, Integer::sum);
            if (attempts >= maxAttemptsOnError) {
                log.error("Message failed {} time(s) with an unexpected error, rejecting it to the parking queue", attempts,
                        failure);
                attemptsOnError.remove(key);
                acks.reject(each.ack());
            } else {
                requeued.add(each);
                attempt = Math.max(attempt, attempts);
            }
        }
        if (requeued.isEmpty()) {
            return;
        }
        try {
            long waited = writer.backoff(attempt);
            log.warn("Unexpected error storing {} message(s) (attempt {} of {}), requeued them after {} ms",
                    requeued.size(), attempt, maxAttemptsOnError, waited, failure);
        } catch (InterruptedException stopping) {
            Thread.currentThread().interrupt();
        } finally {
            requeued.forEach(each -> acks.requeue(each.ack()));
        }
    }

    private static List<Purchase> purchasesOf(List<Waiting> messages) {
        List<Purchase> purchases = new ArrayList<>();
        messages.forEach(each -> purchases.addAll(each.delivery().purchases()));
        return purchases;
    }

    /** Identifies a message across redeliveries (its body), for counting unexpected failures. */
    private static long key(byte[] body) {
        CRC32C crc = new CRC32C();
        crc.update(body);
        return ((long) body.length << 32) | crc.getValue();
    }

    /** Messages handed over and not yet settled (for tests). */
    int unsettled() {
        return acks.pending();
    }

    @Override
    public void start() {
        synchronized (monitor) {
            if (thread == null && !stopped) {
                thread = Thread.ofPlatform().name("purchases-group-writer").daemon().start(this::writeLoop);
            }
        }
    }

    /**
     * Stops taking messages, releases a write waiting for the store (its messages are requeued)
     * and waits for the writer thread; parks under way finish on their own threads.
     */
    @Override
    public void stop() {
        Thread writing;
        synchronized (monitor) {
            stopped = true;
            writing = thread;
            monitor.notifyAll();
        }
        writer.stop();
        if (writing != null) {
            try {
                writing.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        parks.shutdown();
    }

    @Override
    public boolean isRunning() {
        synchronized (monitor) {
            return thread != null && !stopped;
        }
    }
}
