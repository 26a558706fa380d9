package com.supermarket.api.purchase;

import com.supermarket.api.Deadlines;
import com.supermarket.api.broker.BlockedConnectionTracker;
import com.supermarket.api.broker.ShardRouting;
import com.supermarket.api.purchase.IdempotencyStore.Claim;
import com.supermarket.api.purchase.IdempotencyStore.IdempotencyStoreUnavailableException;
import com.supermarket.api.purchase.IdempotencyStore.Outcome;
import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * <p>A request encodes its purchase and puts it in a bounded queue. One sender thread takes
 * what is waiting, groups it by routing bucket ({@link Topology#routingKey}, so
 * {@code x-modulus-hash} keeps every store on one shard), frames each group as one
 * {@link PurchaseBatch} and publishes it once to the ingress fanout with one
 * {@link CorrelationData}; the batch's confirm completes every request in it. Batching is
 * natural: while up to {@code max-in-flight} batches await their confirms, new purchases gather
 * and leave together in the next batch; when nothing is in flight a purchase leaves at once. A
 * nack, a return, a confirm timeout or a failed publish refuses every purchase of that batch and
 * only those. A full queue, or a batch that cannot be let in flight within
 * {@code admission-timeout}, is refused with {@link Reason#OVERLOADED}, never parked.
 *
 * <p>Purchases with an {@code Idempotency-Key}, when an {@link IdempotencyStore} is configured:
 * the sender splits them from the batch it cut, publishes the unkeyed rest at once with the
 * batch's in-flight permit, and has the keys of the keyed part claimed in one round trip without
 * waiting for the answer. A claim holds no in-flight permit, so a store that answers slowly or
 * not at all never holds up the unkeyed purchases. Claims hold one of {@code max-claims-in-flight}
 * slots instead, from the claim until the store's answer; the keyed parts
 * that come while every slot is taken gather and leave together in the next claim (the natural
 * batch again), and are refused ({@link Reason#IDEMPOTENCY_UNAVAILABLE}) once they waited the
 * store's longest wait or a claim failed meanwhile. So a frozen store holds a bounded number of
 * claims, and a keyed purchase is answered within about that wait. The answer goes to the
 * {@code purchase-keyed-sender} thread, which takes an in-flight permit (within the admission
 * timeout plus the store's longest wait, from the oldest purchase's arrival; else
 * {@link Reason#OVERLOADED}) and publishes. A key already bound
 * to another purchase's fingerprint completes that purchase with an
 * {@link IdempotencyConflictException} (422) and takes it out of the batch; the same fingerprint
 * is a retry and is published as before (the consumers deduplicate its id). A store that does
 * not answer refuses the keyed part ({@link Reason#IDEMPOTENCY_UNAVAILABLE}, 503, nothing
 * published for it). Purchases without a key never touch it.
 *
 * <p>Thread-safe: request threads only enqueue and wait on their own future; the sender thread
 * alone touches the grouping state; the keyed parts awaiting a claim are guarded by their
 * queue's monitor, taken by the sender and the threads that complete claims; the keyed sender
 * only takes permits, publishes and answers; confirm callbacks (the AMQP connection's thread, or the timeout's)
 * complete futures, each exactly once because each purchase sits in exactly one
 * batch and a batch is settled by the first of its confirm or its timeout.
 */
@Component
class PurchasePublisher implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(PurchasePublisher.class);
    /** The end of every refusal after which the purchase may still be queued. */
    static final String MAYBE_ACCEPTED = "it may or may not have been accepted: retry later with the same Idempotency-Key";

    private final RabbitTemplate template;
    private final PublishProperties properties;
    private final PublishProperties.Batch settings;
    private final BlockedConnectionTracker blocked;
    private final ShardRouting routing;
    private final IdempotencyStore idempotency;
    private final Deadlines deadlines;
    private final BlockingQueue<Pending> queue;
    private final Semaphore inFlight;
    /** Claims of keys sent to the store and not yet answered. */
    private final Semaphore claimsInFlight;
    /** The keyed parts of the batches cut, waiting for a claim slot, oldest first; guarded by itself. */
    private final ArrayDeque<KeyedPart> awaitingClaim = new ArrayDeque<>();
    /** The purchases in {@link #awaitingClaim}; guarded by it. */
    private int awaitingClaimCount;
    private final Timer confirmLatency;
    private final DistributionSummary batchSize;
    private final Timer idempotencyLatency;
    private final Counter idempotencyConflicts;
    private final Thread sender;
    /** Publishes the batches whose keys were claimed; one thread, so they leave in order. */
    private final ExecutorService keyedSender;
    private volatile boolean closed;
    /**
     * While the sender sleeps out a batch's max-delay: how many queued purchases fill that batch
     * (those of other buckets counted too: it then wakes early and sleeps again); 0 otherwise.
     */
    private volatile int lingerFills;

    /** Sender-thread state: what waits for a batch, by routing key, oldest first within each. */
    private final Map<String, ArrayDeque<Pending>> waiting = new HashMap<>();
    private int waitingCount;

    PurchasePublisher(@Qualifier("publishTemplate") RabbitTemplate template, PublishProperties properties,
                      BlockedConnectionTracker blocked, ShardRouting routing, IdempotencyStore idempotency,
                      Deadlines deadlines, MeterRegistry registry) {
        this.template = template;
        this.properties = properties;
        this.settings = properties.batch();
        this.blocked = blocked;
        this.routing = routing;
        this.idempotency = idempotency;
        this.deadlines = deadlines;
        this.queue = new ArrayBlockingQueue<>(settings.queueCapacity());
        this.inFlight = new Semaphore(settings.maxInFlight());
        this.claimsInFlight = new Semaphore(settings.maxClaimsInFlight());
        this.confirmLatency = Timer.builder("purchases.confirm.latency")
                .description("From the publish of a batch of purchases until the broker confirmed it")
                .publishPercentileHistogram()
                .register(registry);
        this.batchSize = DistributionSummary.builder("purchases.batch.size")
                .description("Purchases per published message")
                .baseUnit("purchases")
                .publishPercentileHistogram()
                .register(registry);
        this.idempotencyLatency = Timer.builder("purchases.idempotency.latency")
                .description("Round trip of one batch's Idempotency-Key claims to the idempotency store, failures included")
                .publishPercentileHistogram()
                .register(registry);
        this.idempotencyConflicts = Counter.builder("purchases.idempotency.conflicts")
                .description("Purchases refused because their Idempotency-Key was used for a different purchase, answered 422")
                .register(registry);
        this.keyedSender = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("purchase-keyed-sender").daemon().factory());
        this.sender = Thread.ofPlatform().name("purchase-sender").daemon().start(this::send);
    }

    /** The keyed purchases of one batch the sender cut, of one routing bucket, oldest first. */
    private record KeyedPart(String routingKey, List<Pending> purchases) {
    }

    /** One purchase waiting for its batch's confirm; {@code claim} is null unless its key is to be checked. */
    private record Pending(String routingKey, byte[] encoded, Claim claim, long enqueuedNanos, CompletableFuture<Void> done) {
    }

    /**
     * Publishes the request's purchase and waits until its batch is confirmed.
     *
     * @throws PublishRefusedException      when the broker did not durably accept it
     * @throws IdempotencyConflictException when its {@code Idempotency-Key} names another purchase
     */
    void publish(PurchaseRequest request) {
        CompletableFuture<Void> done = submit(request);
        // Untimed: every future is settled within admission + key check + confirm timeout (the
        // sender refuses the overdue, the keyed sender a claimed batch overdue by as much, the key
        // check and the confirm have deadlines, a stop refuses what waits). A timed wait of a
        // virtual thread costs more (see Deadlines).
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
        Claim claim = idempotency.enabled() ? request.idempotencyKey() : null;
        Pending pending = new Pending(Topology.routingKey(purchase.storeId(), settings.buckets()),
                WireFormat.encode(purchase), claim, System.nanoTime(), new CompletableFuture<>());
        if (closed) {
            return CompletableFuture.failedFuture(shuttingDown());
        }
        if (!queue.offer(pending)) {
            return CompletableFuture.failedFuture(new PublishRefusedException(Reason.OVERLOADED,
                    "the API is overloaded (" + settings.queueCapacity() + " purchases wait to be published); retry later",
                    null));
        }
        int fills = lingerFills;
        if (fills > 0 && queue.size() >= fills) {
            LockSupport.unpark(sender);
        }
        // Closed meanwhile: the sender's last drain may have missed this one; whoever removes it refuses it.
        if (closed && queue.remove(pending)) {
            return CompletableFuture.failedFuture(shuttingDown());
        }
        return pending.done();
    }

    private void send() {
        try {
            while (!closed) {
                if (waitingCount == 0) {
                    add(queue.take()); // idle: block until a purchase comes, then publish it at once
                }
                drain();
                Pending oldest = oldest();
                long admissionLeft = oldest.enqueuedNanos() + settings.admissionTimeout().toNanos() - System.nanoTime();
                // While the sender waits for a permit, new purchases gather: the natural batch.
                if (!inFlight.tryAcquire(Math.max(0, admissionLeft), TimeUnit.NANOSECONDS)) {
                    refuseOverdue();
                    continue;
                }
                drain();
                claimAndPublish(oldest.routingKey(), cut(oldest.routingKey()));
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

    private void add(Pending pending) {
        waiting.computeIfAbsent(pending.routingKey(), key -> new ArrayDeque<>()).addLast(pending);
        waitingCount++;
    }

    /** @return how many purchases it took from the queue */
    private int drain() {
        int drained = 0;
        for (Pending pending = queue.poll(); pending != null; pending = queue.poll()) {
            add(pending);
            drained++;
        }
        return drained;
    }

    private Pending oldest() {
        Pending oldest = null;
        for (ArrayDeque<Pending> bucket : waiting.values()) {
            Pending head = bucket.peekFirst();
            if (head != null && (oldest == null || head.enqueuedNanos() - oldest.enqueuedNanos() < 0)) {
                oldest = head;
            }
        }
        return oldest;
    }

    /**
     * Takes up to max-size purchases of one bucket. When other batches are in flight (the
     * publisher is busy) and the batch is short, waits up to max-delay from its oldest purchase
     * for more: fewer, larger messages cost the broker less. An idle publisher never waits, and
     * the wait ends once no purchase (of any bucket) came for max-gap: when every client waits
     * for an answer, none will come.
     */
    private List<Pending> cut(String routingKey) throws InterruptedException {
        ArrayDeque<Pending> bucket = waiting.get(routingKey);
        boolean busy = inFlight.availablePermits() < settings.maxInFlight() - 1;
        long lingerUntil = bucket.peekFirst().enqueuedNanos() + settings.maxDelay().toNanos();
        while (busy && bucket.size() < settings.maxSize()) {
            long left = lingerUntil - System.nanoTime();
            if (left <= 0) {
                break;
            }
            // Sleeps through the linger rather than waking for each purchase: a request wakes it
            // only once enough wait to fill the batch (see submit). Set before the check, so a
            // request that comes between the two is seen by one or the other.
            int missing = settings.maxSize() - bucket.size();
            lingerFills = missing;
            if (queue.size() < missing) {
                LockSupport.parkNanos(this, Math.min(left, settings.maxGap().toNanos()));
            }
            lingerFills = 0;
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (drain() == 0) {
                break;
            }
        }
        int size = Math.min(bucket.size(), settings.maxSize());
        List<Pending> batch = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            batch.add(bucket.pollFirst());
        }
        waitingCount -= size;
        return batch;
    }

    /**
     * Publishes a batch cut by the sender, which holds one in-flight permit for it. Its keyed
     * purchases leave it: they wait for a claim (see {@link #claimWaiting}), without a permit.
     */
    private void claimAndPublish(String routingKey, List<Pending> batch) {
        List<Pending> keyed = new ArrayList<>();
        List<Pending> unkeyed = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            (pending.claim() == null ? unkeyed : keyed).add(pending);
        }
        if (unkeyed.isEmpty()) {
            inFlight.release();
        } else {
            publish(routingKey, unkeyed);
        }
        if (keyed.isEmpty()) {
            return;
        }
        synchronized (awaitingClaim) {
            if (awaitingClaimCount + keyed.size() > settings.queueCapacity()) {
                answer(keyed, storeNotAnswering(awaitingClaimCount + " purchases await their claims"));
                return;
            }
            awaitingClaim.addLast(new KeyedPart(routingKey, keyed));
            awaitingClaimCount += keyed.size();
        }
        claimWaiting();
    }

    /**
     * While a claim slot is free, claims the keys of every keyed part waiting, in one round trip,
     * without waiting for the answer; the answer frees the slot and calls this again (on the
     * store's thread), and hands the parts to the keyed sender thread, which publishes what may
     * be published. What waits while every slot is taken gathers into the next claim: the natural
     * batch. A part that waited a whole store timeout for a slot is refused: the store is not
     * answering. Called by the sender and on the store's answers.
     */
    private void claimWaiting() {
        while (claimsInFlight.tryAcquire()) {
            List<KeyedPart> parts = new ArrayList<>();
            synchronized (awaitingClaim) {
                long now = System.nanoTime();
                for (KeyedPart part = awaitingClaim.pollFirst(); part != null; part = awaitingClaim.pollFirst()) {
                    awaitingClaimCount -= part.purchases().size();
                    if (now - part.purchases().getFirst().enqueuedNanos() >= idempotency.maxWait().toNanos()) {
                        answer(part.purchases(), storeNotAnswering(settings.maxClaimsInFlight() + " claims await it"));
                    } else {
                        parts.add(part);
                    }
                }
            }
            if (parts.isEmpty()) {
                claimsInFlight.release();
                synchronized (awaitingClaim) {
                    if (awaitingClaim.isEmpty()) {
                        return; // a part added from here on is claimed by whoever added it
                    }
                }
                continue;
            }
            claim(parts);
        }
    }

    /** Claims the keys of {@code parts} in one call, holding one claim slot. */
    private void claim(List<KeyedPart> parts) {
        List<Claim> claims = new ArrayList<>();
        for (KeyedPart part : parts) {
            for (Pending pending : part.purchases()) {
                claims.add(pending.claim());
            }
        }
        long start = System.nanoTime();
        CompletableFuture<List<Outcome>> outcomes;
        try {
            outcomes = idempotency.claim(claims);
        } catch (RuntimeException e) {
            outcomes = CompletableFuture.failedFuture(e);
        }
        // The slot is the store's round trip only: freed on the answer's thread, not behind the
        // keyed sender's waits for permits, so that what waits for a slot waits for the store.
        outcomes.whenComplete((claimed, error) -> {
            idempotencyLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            claimsInFlight.release();
            if (error != null) {
                // Those that came meanwhile would wait for a claim as long again: answer them now.
                refuseAwaitingClaim(storeNotAnswering("a claim before it failed: " + rootMessage(error)));
            }
            claimWaiting();
        });
        outcomes.whenCompleteAsync((claimed, error) -> {
            int next = 0;
            for (KeyedPart part : parts) {
                List<Pending> keyed = part.purchases();
                List<Outcome> own = claimed == null ? null : claimed.subList(next, next + keyed.size());
                next += keyed.size();
                List<Pending> publishable;
                try {
                    publishable = afterClaims(keyed, own, error);
                } catch (RuntimeException e) {
                    // A bug: the batch still gets its answers (answering twice is harmless).
                    log.error("checking the keys of a batch failed", e);
                    answer(keyed, new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                            "the Idempotency-Key could not be checked; retry later with the same Idempotency-Key", e));
                    continue;
                }
                if (!publishable.isEmpty()) {
                    admitAndPublish(part.routingKey(), publishable);
                }
            }
        }, keyedSender);
    }

    private void refuseAwaitingClaim(PublishRefusedException refused) {
        synchronized (awaitingClaim) {
            for (KeyedPart part = awaitingClaim.pollFirst(); part != null; part = awaitingClaim.pollFirst()) {
                answer(part.purchases(), refused);
            }
            awaitingClaimCount = 0;
        }
    }

    private static String rootMessage(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return String.valueOf(cause.getMessage());
    }

    private static PublishRefusedException storeNotAnswering(String why) {
        return new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE, "the Idempotency-Key could not be checked:"
                + " the idempotency store is not answering (" + why + "); the purchase was not accepted, retry later with"
                + " the same Idempotency-Key", null);
    }

    /**
     * Publishes a claimed batch once it gets an in-flight permit: its purchases may wait for one
     * as long as for any batch, plus the time the store may take to answer.
     */
    private void admitAndPublish(String routingKey, List<Pending> batch) {
        long admitBy = batch.getFirst().enqueuedNanos() + settings.admissionTimeout().toNanos()
                + idempotency.maxWait().toNanos();
        boolean admitted;
        try {
            admitted = inFlight.tryAcquire(Math.max(0, admitBy - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            admitted = false;
        }
        if (admitted) {
            publish(routingKey, batch);
        } else {
            answer(batch, overloaded());
        }
    }

    /**
     * Completes the purchases of a batch that may not be published (a conflict: 422; no answer
     * from the store: 503 for every keyed one) and returns the rest.
     */
    private List<Pending> afterClaims(List<Pending> batch, List<Outcome> outcomes, Throwable error) {
        List<Pending> publishable = new ArrayList<>(batch.size());
        if (error != null) {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (!(cause instanceof IdempotencyStoreUnavailableException)) {
                log.error("the idempotency check failed unexpectedly", cause);
            }
            PublishRefusedException refused = new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                    "the Idempotency-Key could not be checked: the idempotency store is unavailable (" + cause.getMessage()
                            + "); the purchase was not accepted, retry later with the same Idempotency-Key", cause);
            for (Pending pending : batch) {
                if (pending.claim() == null) {
                    publishable.add(pending);
                } else {
                    pending.done().completeExceptionally(refused);
                }
            }
            return publishable;
        }
        int next = 0;
        for (Pending pending : batch) {
            if (pending.claim() != null && outcomes.get(next++) == Outcome.CONFLICT) {
                idempotencyConflicts.increment();
                pending.done().completeExceptionally(new IdempotencyConflictException("the Idempotency-Key was already"
                        + " used for a different purchase (store, customer, date or items differ); the first purchase"
                        + " stands and this one was not accepted:"
                        + " send a different purchase with a new Idempotency-Key"));
            } else {
                publishable.add(pending);
            }
        }
        return publishable;
    }

    /** Publishes one batch; holds one in-flight permit, released when the batch is settled. */
    private void publish(String routingKey, List<Pending> batch) {
        List<byte[]> encoded = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            encoded.add(pending.encoded());
        }
        MessageProperties props = new MessageProperties();
        props.setContentType(WireFormat.CONTENT_TYPE);
        props.setType(PurchaseBatch.MESSAGE_TYPE);
        props.setDeliveryMode(properties.persistent() ? MessageDeliveryMode.PERSISTENT : MessageDeliveryMode.NON_PERSISTENT);
        Message message = new Message(PurchaseBatch.frame(encoded), props);
        CorrelationData correlation = new CorrelationData();
        long start = System.nanoTime();
        try {
            template.send(Topology.INGRESS_EXCHANGE, routingKey, message, correlation);
        } catch (AmqpTimeoutException e) {
            settle(batch, new PublishRefusedException(Reason.CHANNELS_EXHAUSTED,
                    "the API is overloaded (no free broker channel); retry later", e));
            return;
        } catch (RuntimeException e) {
            // AmqpException mostly; anything else must not stop the sender either.
            settle(batch, new PublishRefusedException(Reason.UNREACHABLE, "the broker is unreachable; retry later", e));
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
            settle(batch, refused);
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
            // A nack is not a promise that nothing was enqueued, and Spring AMQP also nacks every
            // outstanding confirm when a channel closes under it.
            return new PublishRefusedException(Reason.NACK,
                    "the broker did not confirm the purchase (" + confirm.reason() + "); " + MAYBE_ACCEPTED, null);
        }
        return null;
    }

    /** Completes every request of a batch: accepted when {@code refused} is null; frees its permit. */
    private void settle(List<Pending> batch, PublishRefusedException refused) {
        inFlight.release();
        answer(batch, refused);
    }

    /** Completes every request of a batch: accepted when {@code refused} is null. */
    private static void answer(List<Pending> batch, PublishRefusedException refused) {
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
        return new PublishRefusedException(Reason.OVERLOADED, "the API is overloaded ("
                + settings.maxInFlight() + " batches await the broker's confirms); retry later", null);
    }

    private void refuseOverdue() {
        PublishRefusedException refused = overloaded();
        long now = System.nanoTime();
        long timeout = settings.admissionTimeout().toNanos();
        for (ArrayDeque<Pending> bucket : waiting.values()) {
            while (!bucket.isEmpty() && now - bucket.peekFirst().enqueuedNanos() >= timeout) {
                bucket.pollFirst().done().completeExceptionally(refused);
                waitingCount--;
            }
        }
    }

    private void refuseAll() {
        drain();
        PublishRefusedException refused = shuttingDown();
        for (ArrayDeque<Pending> bucket : waiting.values()) {
            for (Pending pending = bucket.pollFirst(); pending != null; pending = bucket.pollFirst()) {
                pending.done().completeExceptionally(refused);
            }
        }
        waitingCount = 0;
    }

    private static PublishRefusedException shuttingDown() {
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
        // Keyed purchases awaiting their claims, or a permit after them, are published by the keyed sender.
        long claimWait = idempotency.maxWait().toMillis() + settings.admissionTimeout().toMillis();
        boolean claimsDone = claimsInFlight.tryAcquire(settings.maxClaimsInFlight(), claimWait, TimeUnit.MILLISECONDS);
        refuseAwaitingClaim(shuttingDown());
        if (claimsDone) {
            claimsInFlight.release(settings.maxClaimsInFlight());
        }
        if (inFlight.tryAcquire(settings.maxInFlight(), properties.confirmTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            inFlight.release(settings.maxInFlight());
        }
        keyedSender.shutdown();
    }
}
