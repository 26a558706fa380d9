package com.supermarket.api.purchase;

import com.supermarket.api.Deadlines;
import com.supermarket.api.broker.BlockedConnectionTracker;
import com.supermarket.api.broker.ShardRouting;
import com.supermarket.api.purchase.IdempotencyStore.Claim;
import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.broker.MessageTracing;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;

/**
 * Publishes purchases by group commit, and returns from {@link #publish} only once the broker
 * confirmed the message holding the purchase as routed and stored.
 *
 * <p>A request encodes its purchase, notes its store's partition ({@link ShardRouting#partitionOf}),
 * and puts it in a bounded queue. One sender thread takes what is waiting, groups it by partition
 * ({@link PartitionBatches}), frames a partition's group as one {@link PurchaseBatch} and
 * publishes it once to the ingress fanout with one {@link CorrelationData}, with the routing key
 * of the partition's next shard queue ({@link ShardRouting#routingKey}), so a partition's batches
 * go round its shard queues; the batch's confirm completes every request in it. An idle partition
 * sends at once; while its batch awaits its confirm, its new purchases gather, and leave together
 * after the confirm once they stop coming faster than one per {@code delay-per-purchase} (or fill
 * a batch), between {@code min-delay} and {@code max-delay} of gathering
 * ({@link PartitionBatches.Policy}): nothing waits at a light load, a short linger at a moderate
 * one, and under load large batches, whatever the shard count. At most {@code max-in-flight}
 * batches are in flight over all partitions. A nack, a return, a confirm timeout or a failed
 * publish refuses every purchase of that batch and only those. A full queue, or a purchase whose
 * batch cannot be let in flight within {@code admission-timeout}, is refused with
 * {@link Reason#OVERLOADED}, never parked.
 *
 * <p>Purchases with an {@code Idempotency-Key}, when an {@link IdempotencyStore} is configured,
 * have their keys claimed first ({@link KeyClaims}), which hands those it lets through to the
 * queue ({@link #enqueue}); a confirmed batch records its keys as confirmed in the store before
 * its requests are answered, so that a retry is answered without publishing again (a retry whose
 * first publish is not known to be confirmed is published again, and the consumers deduplicate
 * its id).
 *
 * <p>Thread-safe: request threads (and the key claims' threads) enqueue and wait on their own
 * future; the sender thread alone touches the waiting purchases (the partitions' counts of
 * batches in flight are atomic, see {@link PartitionBatches}); confirm callbacks (the AMQP
 * connection's thread, or the timeout's) complete futures, each exactly once because each
 * purchase sits in exactly one batch and a batch is settled by the first of its confirm or its
 * timeout.
 */
@Component
class PurchasePublisher implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(PurchasePublisher.class);
    /** The end of every refusal after which the purchase may still be queued. */
    static final String MAYBE_ACCEPTED = "it may or may not have been accepted: retry later with the same Idempotency-Key";
    /** The span of a batch's publish, up to its confirm (tracing on). */
    static final String PUBLISH_SPAN = "purchases publish";

    private final RabbitTemplate template;
    private final PublishProperties properties;
    private final PublishProperties.Batch settings;
    private final BlockedConnectionTracker blocked;
    private final ShardRouting routing;
    private final IdempotencyStore idempotency;
    private final Deadlines deadlines;
    private final MessageTracing tracing;
    private final KeyClaims keyClaims;
    private final BlockingQueue<Pending> queue;
    private final Semaphore inFlight;
    private final Timer confirmLatency;
    private final DistributionSummary batchSize;
    private final Thread sender;
    private volatile boolean closed;
    /**
     * While the sender is parked with nothing it may publish: how many queued purchases could
     * fill a waiting batch (a request wakes it once the queue holds that many, or at once for an
     * idle partition); 0 while it runs.
     */
    private volatile int wakeAtQueued;
    /** What waits for a batch, by partition; see its thread-safety. */
    private final PartitionBatches batches;

    PurchasePublisher(@Qualifier("publishTemplate") RabbitTemplate template, PublishProperties properties,
                      BlockedConnectionTracker blocked, ShardRouting routing, IdempotencyStore idempotency,
                      Deadlines deadlines, MessageTracing tracing, MeterRegistry registry) {
        this.template = template;
        this.properties = properties;
        this.settings = properties.batch();
        this.blocked = blocked;
        this.routing = routing;
        this.idempotency = idempotency;
        this.deadlines = deadlines;
        this.tracing = tracing;
        this.queue = new ArrayBlockingQueue<>(settings.queueCapacity());
        this.inFlight = new Semaphore(settings.maxInFlight());
        this.batches = new PartitionBatches(PartitionBatches.Policy.of(settings));
        this.keyClaims = new KeyClaims(idempotency, settings, this::enqueue, registry);
        this.confirmLatency = Timer.builder("api.purchases.confirm.latency")
                .description("From the publish of a batch of purchases until the broker confirmed it")
                .publishPercentileHistogram()
                .register(registry);
        this.batchSize = DistributionSummary.builder("api.purchases.batch.size")
                .description("Purchases per published message")
                .baseUnit("purchases")
                .publishPercentileHistogram()
                .register(registry);
        this.sender = Thread.ofPlatform().name("purchase-sender").daemon().start(this::send);
    }

    /**
     * One purchase waiting for its batch's confirm, with its store's partition;
     * {@code claim} is null unless it has a key to check (and, once published, to record as
     * confirmed). It may wait to be let in flight until {@code admitByNanos}: the admission
     * timeout, plus the store's longest wait for a keyed one. {@code trace} is its request's
     * span, which the batch's span links to; null when tracing is off.
     */
    record Pending(int partition, byte[] encoded, Claim claim, long enqueuedNanos, long admitByNanos,
                   TraceContext trace, CompletableFuture<Void> done) {
    }

    /**
     * Publishes the request's purchase and waits until its batch is confirmed.
     *
     * @throws PublishRefusedException      when the broker did not durably accept it
     * @throws IdempotencyConflictException when its {@code Idempotency-Key} names another purchase
     */
    void publish(PurchaseRequest request) {
        CompletableFuture<Void> done = submit(request);
        // Untimed: every future is settled within key check + admission + confirm timeout (the
        // key check and the confirm have deadlines, the sender refuses the overdue, a stop
        // refuses what waits). A timed wait of a virtual thread costs more (see Deadlines).
        try {
            done.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PublishRefusedException refused) {
                throw refused;
            }
            if (e.getCause() instanceof IdempotencyConflictException conflict) {
                throw conflict;
            }
            throw new PublishRefusedException(Reason.UNREACHABLE, "publishing failed; " + MAYBE_ACCEPTED, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PublishRefusedException(Reason.INTERRUPTED, "the request was interrupted; retry later", e);
        }
    }

    /**
     * Hands the request's purchase to the group commit. The future completes normally once its batch
     * is confirmed, or exceptionally with a {@link PublishRefusedException} or an
     * {@link IdempotencyConflictException}; exactly once.
     */
    CompletableFuture<Void> submit(PurchaseRequest request) {
        if (blocked.isBlocked()) {
            // Refuse fast: a publish on a blocked connection would only wait out the confirm timeout.
            return CompletableFuture.failedFuture(new PublishRefusedException(Reason.BLOCKED,
                    "the broker is blocking publishers (" + blocked.reason() + "); retry later", null));
        }
        String unroutable = routing.problem();
        if (unroutable != null) {
            return CompletableFuture.failedFuture(new PublishRefusedException(Reason.UNROUTABLE,
                    "could not route the purchase to every consumer (" + unroutable + "); retry later", null));
        }
        // Encoded here, on the request's thread: the sender's serial work stays small.
        Purchase purchase = request.purchase();
        TraceContext trace = tracing.current();
        if (trace != null) {
            purchase = purchase.withTraceparent(MessageTracing.traceparent(trace));
        }
        Claim claim = idempotency.enabled() ? request.idempotencyKey() : null;
        long now = System.nanoTime();
        long admitBy = now + settings.admissionTimeout().toNanos() + (claim == null ? 0 : idempotency.maxWait().toNanos());
        Pending pending = new Pending(routing.partitionOf(purchase.storeId()), WireFormat.encode(purchase), claim, now,
                admitBy, trace, new CompletableFuture<>());
        if (claim == null) {
            enqueue(pending);
        } else {
            keyClaims.claim(pending);
        }
        return pending.done();
    }

    /** Hands a purchase to the sender, or refuses it when the queue is full or the publisher closed. */
    private void enqueue(Pending pending) {
        if (closed) {
            pending.done().completeExceptionally(shuttingDown());
            return;
        }
        if (!queue.offer(pending)) {
            pending.done().completeExceptionally(new PublishRefusedException(Reason.OVERLOADED,
                    "the API is overloaded (" + settings.queueCapacity() + " purchases wait to be published); retry later",
                    null));
            return;
        }
        // The sender parks while nothing may leave; this purchase may let a batch leave when its
        // partition is idle and a permit is free (else that confirm wakes the sender), or when the
        // queue holds enough to fill a waiting batch; a lingering batch's end wakes the sender itself.
        int wakeAt = wakeAtQueued;
        if (wakeAt > 0 && (!batches.busy(pending.partition()) && inFlight.availablePermits() > 0
                || queue.size() >= wakeAt)) {
            LockSupport.unpark(sender);
        }
        // Closed meanwhile: the sender's last drain may have missed this one; whoever removes it refuses it.
        if (closed && queue.remove(pending)) {
            pending.done().completeExceptionally(shuttingDown());
        }
    }

    private void send() {
        try {
            while (!closed) {
                drain();
                long now = System.nanoTime();
                int partition = batches.next(now);
                if (partition >= 0 && inFlight.tryAcquire()) {
                    publish(batches.cut(partition));
                    continue;
                }
                // Nothing may leave now: what waits for a permit, its partition's confirm or its linger gathers.
                batches.refuseOverdue(now, this::overloaded);
                awaitWork();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            log.error("the purchase sender stopped", e);
            throw e;
        } finally {
            closed = true;
            refuseAll();
        }
    }

    /** Moves what the queue holds to the partitions' batches. */
    private void drain() {
        for (Pending pending = queue.poll(); pending != null; pending = queue.poll()) {
            batches.add(pending);
        }
    }

    /**
     * Parks until something may let a batch leave (a purchase for an idle partition, enough
     * purchases to fill a batch, a confirm, the end of a batch's linger) or the earliest admission
     * deadline passes, at most an admission timeout, so that the purchases queued meanwhile for
     * busy partitions are refused in time too. The wake-up condition is set before looking again,
     * so a request or a confirm that comes between is seen by one or the other: a confirm always
     * wakes a parked sender, a request when its purchase may leave at once ({@link #enqueue}).
     */
    private void awaitWork() throws InterruptedException {
        wakeAtQueued = batches.missingToFill();
        long now = System.nanoTime();
        if (queue.isEmpty() && (batches.next(now) < 0 || inFlight.availablePermits() == 0)) {
            long left = Math.min(Math.min(batches.admissionLeft(now), batches.lingerLeft(now)),
                    settings.admissionTimeout().toNanos());
            if (left > 0) {
                LockSupport.parkNanos(this, left);
            }
        }
        wakeAtQueued = 0;
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    /**
     * Publishes one batch of one partition to the partition's shard queue of its turn; holds one
     * in-flight permit, released when the batch is settled.
     */
    private void publish(PartitionBatches.Batch cut) {
        List<Pending> batch = cut.purchases();
        int partition = cut.partition();
        String routingKey = routing.routingKey(partition, cut.turn());
        List<byte[]> encoded = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            encoded.add(pending.encoded());
        }
        MessageProperties props = new MessageProperties();
        props.setContentType(WireFormat.CONTENT_TYPE);
        props.setType(PurchaseBatch.MESSAGE_TYPE);
        props.setDeliveryMode(properties.persistent() ? MessageDeliveryMode.PERSISTENT : MessageDeliveryMode.NON_PERSISTENT);
        Span span = tracing.sending(PUBLISH_SPAN, Span.Kind.PRODUCER, batch, Pending::trace, props);
        Message message = new Message(PurchaseBatch.frame(encoded), props);
        CorrelationData correlation = new CorrelationData();
        long start = System.nanoTime();
        try {
            template.send(Topology.INGRESS_EXCHANGE, routingKey, message, correlation);
        } catch (AmqpTimeoutException e) {
            settle(partition, batch, span, new PublishRefusedException(Reason.CHANNELS_EXHAUSTED,
                    "the API is overloaded (no free broker channel); retry later", e));
            return;
        } catch (RuntimeException e) {
            // AmqpException mostly; anything else must not stop the sender either.
            settle(partition, batch, span, new PublishRefusedException(Reason.UNREACHABLE,
                    "the broker is unreachable; retry later", e));
            return;
        }
        batchSize.record(batch.size());
        CompletableFuture<CorrelationData.Confirm> confirmed = correlation.getFuture();
        deadlines.timeOut(confirmed, properties.confirmTimeout());
        confirmed.whenComplete((confirm, error) -> {
            PublishRefusedException refused = refusal(correlation, confirm, error);
            if (refused == null) {
                confirmLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            }
            settle(partition, batch, span, refused);
        });
    }

    /** Why the batch was not accepted, or null when the broker acked it and returned nothing. */
    private PublishRefusedException refusal(CorrelationData correlation, CorrelationData.Confirm confirm, Throwable error) {
        if (error instanceof TimeoutException) {
            return new PublishRefusedException(Reason.CONFIRM_TIMEOUT, confirmTimeoutMessage(), error);
        }
        if (error != null) {
            return new PublishRefusedException(Reason.UNREACHABLE, "the broker connection failed before the confirm; "
                    + MAYBE_ACCEPTED, error);
        }
        // A return arrives before its confirm, so it is visible here.
        if (correlation.getReturned() != null) {
            return new PublishRefusedException(Reason.UNROUTABLE, "the broker could not route the purchase ("
                    + correlation.getReturned().getReplyText() + "); the topology is not ready, retry later", null);
        }
        if (!confirm.ack()) {
            // A nack is not a promise that nothing was enqueued: a full shard queue refuses the
            // message while the other queues it is routed to take it. The broker's own nack gives
            // no reason; Spring AMQP's, when a channel closes under outstanding confirms, does.
            String why = confirm.reason() == null
                    ? "the broker refused the purchase: a queue it goes to is full (its consumers are behind) or cannot take it now"
                    : "the broker did not confirm the purchase (" + confirm.reason() + ")";
            return new PublishRefusedException(Reason.NACK, why + "; " + MAYBE_ACCEPTED, null);
        }
        return null;
    }

    /**
     * Completes every request of a batch: accepted when {@code refused} is null, its keys then
     * recorded as confirmed first, so that a retry is answered without publishing again (the
     * record is written to the store before the answer leaves, and a retry's claim after it on
     * the same connection sees it); frees its permit and lets its partition send again, waking
     * the sender if it waits; ends the batch's span.
     */
    private void settle(int partition, List<Pending> batch, Span span, PublishRefusedException refused) {
        if (refused != null) {
            span.error(refused);
        }
        span.end();
        inFlight.release();
        batches.settled(partition, System.nanoTime());
        if (wakeAtQueued > 0) {
            LockSupport.unpark(sender);
        }
        if (refused == null) {
            List<Claim> confirmed = null;
            for (Pending pending : batch) {
                if (pending.claim() != null) {
                    if (confirmed == null) {
                        confirmed = new ArrayList<>();
                    }
                    confirmed.add(pending.claim());
                }
            }
            if (confirmed != null) {
                idempotency.confirmed(confirmed);
            }
        }
        answer(batch, refused);
    }

    /** Completes every request of a batch: accepted when {@code refused} is null. */
    static void answer(List<Pending> batch, PublishRefusedException refused) {
        for (Pending pending : batch) {
            if (refused == null) {
                pending.done().complete(null);
            } else {
                pending.done().completeExceptionally(refused);
            }
        }
    }

    private String confirmTimeoutMessage() {
        return "the broker did not confirm the purchase in " + properties.confirmTimeout().toMillis() + " ms; " + MAYBE_ACCEPTED;
    }

    private PublishRefusedException overloaded() {
        return new PublishRefusedException(Reason.OVERLOADED, "the API is overloaded (the purchase could not be"
                + " published within " + settings.admissionTimeout().toMillis() + " ms: the broker's confirms are slow);"
                + " retry later", null);
    }

    private void refuseAll() {
        drain();
        batches.refuseAll(shuttingDown());
    }

    static PublishRefusedException shuttingDown() {
        return new PublishRefusedException(Reason.INTERRUPTED, "the API is shutting down; retry later", null);
    }

    /**
     * Stops taking purchases, refuses those not yet published, and waits (up to the confirm
     * timeout) for the confirms of the batches in flight, so that their requests are answered.
     */
    @Override
    public void destroy() throws InterruptedException {
        closed = true;
        sender.interrupt();
        sender.join(properties.confirmTimeout().toMillis());
        // Keyed purchases whose claim is answered from now on find the publisher closed.
        keyClaims.close();
        if (inFlight.tryAcquire(settings.maxInFlight(), properties.confirmTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            inFlight.release(settings.maxInFlight());
        }
    }
}
