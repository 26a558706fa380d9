package com.supermarket.api.purchase;

import com.supermarket.api.Deadlines;
import com.supermarket.api.broker.BlockedConnectionTracker;
import com.supermarket.api.broker.ShardRouting;
import com.supermarket.api.purchase.IdempotencyStore.Claim;
import com.supermarket.api.purchase.IdempotencyStore.IdempotencyStoreUnavailableException;
import com.supermarket.api.purchase.IdempotencyStore.Outcome;
import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.broker.MessageTracing;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * <p>A request encodes its purchase, with the routing key of its store's shard
 * ({@link ShardRouting#routingKey}: one key per shard queue, so every shard queue receives stores
 * and {@code x-modulus-hash} keeps each store on one), and puts it in a bounded queue. One sender
 * thread takes what is waiting, groups it by shard ({@link ShardBatches}), frames a shard's group
 * as one {@link PurchaseBatch} and publishes it once to the ingress fanout with one
 * {@link CorrelationData}; the batch's confirm completes every request in it. Batching is
 * natural: a shard with no batch in flight sends at once, and while its batch awaits its
 * confirm, its new purchases gather and leave together when the confirm comes (or once they fill
 * a batch), so nothing lingers at a light load and batches grow with the load. At most
 * {@code max-in-flight} batches are in flight over all shards. A nack, a return, a confirm
 * timeout or a failed publish refuses every purchase of that batch and only those. A full queue,
 * or a purchase whose batch cannot be let in flight within {@code admission-timeout}, is refused
 * with {@link Reason#OVERLOADED}, never parked.
 *
 * <p>Purchases with an {@code Idempotency-Key}, when an {@link IdempotencyStore} is configured,
 * have their keys claimed before they join the queue. A claim holds none of the in-flight
 * permits, so a store that answers slowly or not at all never holds up the purchases without a
 * key; it holds one of {@code max-claims-in-flight} claim slots, from the claim until the store's
 * answer, and the keyed purchases that come while every slot is taken gather and leave together
 * in the next claim, one round trip (the natural batch again). Those that waited the store's
 * longest wait for a slot, or were waiting when a claim failed, are refused
 * ({@link Reason#IDEMPOTENCY_UNAVAILABLE}, nothing published for them), so a keyed purchase is
 * answered within about that wait. The answer sorts them: a key bound to another purchase's
 * fingerprint completes that purchase with an {@link IdempotencyConflictException} (422); a retry
 * of a purchase whose publish was confirmed is answered at once, not published again (the
 * publisher records each confirm in the store); anything else joins the queue and is batched and
 * published with the purchases without a key (a retry whose first publish is not known to be
 * confirmed is published again, and the consumers deduplicate its id).
 *
 * <p>Thread-safe: request threads enqueue, or queue a claim, and wait on their own future; the
 * sender thread alone touches the waiting purchases (the shards' counts of batches in flight are
 * atomic, see {@link ShardBatches}); the purchases awaiting a claim are guarded by
 * their queue's monitor, taken by request threads and the threads that complete claims; confirm
 * callbacks (the AMQP connection's thread, or the timeout's) complete futures, each exactly once
 * because each purchase sits in exactly one batch and a batch is settled by the first of its
 * confirm or its timeout.
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
    private final BlockingQueue<Pending> queue;
    private final Semaphore inFlight;
    /** Claims of keys sent to the store and not yet answered. */
    private final Semaphore claimsInFlight;
    /** Keyed purchases waiting for a claim slot, oldest first; guarded by itself. */
    private final ArrayDeque<Pending> awaitingClaim = new ArrayDeque<>();
    private final Timer confirmLatency;
    private final DistributionSummary batchSize;
    private final Timer idempotencyLatency;
    private final Counter idempotencyConflicts;
    private final Counter idempotencyReplays;
    private final Thread sender;
    private volatile boolean closed;
    /**
     * While the sender is parked with nothing it may publish: how many queued purchases could
     * fill a waiting batch (a request wakes it once the queue holds that many, or at once for a
     * shard with no batch in flight); 0 while it runs.
     */
    private volatile int wakeAtQueued;
    /** What waits for a batch, by shard; see its thread-safety. */
    private final ShardBatches batches;

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
        this.claimsInFlight = new Semaphore(settings.maxClaimsInFlight());
        this.batches = new ShardBatches(settings.maxSize());
        this.confirmLatency = Timer.builder("api.purchases.confirm.latency")
                .description("From the publish of a batch of purchases until the broker confirmed it")
                .publishPercentileHistogram()
                .register(registry);
        this.batchSize = DistributionSummary.builder("api.purchases.batch.size")
                .description("Purchases per published message")
                .baseUnit("purchases")
                .publishPercentileHistogram()
                .register(registry);
        this.idempotencyLatency = Timer.builder("api.purchases.idempotency.latency")
                .description("Round trip of one batch's Idempotency-Key claims to the idempotency store, failures included")
                .publishPercentileHistogram()
                .register(registry);
        this.idempotencyConflicts = Counter.builder("api.purchases.idempotency.conflicts")
                .description("Purchases refused because their Idempotency-Key was used for a different purchase, answered 422")
                .register(registry);
        this.idempotencyReplays = Counter.builder("api.purchases.idempotency.replays")
                .description("Retries of purchases whose publish was confirmed, answered 201 without publishing them again")
                .register(registry);
        this.sender = Thread.ofPlatform().name("purchase-sender").daemon().start(this::send);
    }

    /**
     * One purchase waiting for its batch's confirm, with the routing key of its shard;
     * {@code claim} is null unless it has a key to check (and, once published, to record as
     * confirmed). It may wait to be let in flight until {@code admitByNanos}: the admission
     * timeout, plus the store's longest wait for a keyed one. {@code trace} is its request's
     * span, which the batch's span links to; null when tracing is off.
     */
    record Pending(String routingKey, byte[] encoded, Claim claim, long enqueuedNanos, long admitByNanos,
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
        Pending pending = new Pending(routing.routingKey(purchase.storeId()), WireFormat.encode(purchase), claim, now,
                admitBy, trace, new CompletableFuture<>());
        if (claim == null) {
            enqueue(pending);
        } else {
            awaitClaim(pending);
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
        // shard has none in flight and a permit is free (else that confirm wakes the sender), or
        // when the queue holds enough to fill a waiting batch.
        int wakeAt = wakeAtQueued;
        if (wakeAt > 0 && (!batches.busy(pending.routingKey()) && inFlight.availablePermits() > 0
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
                String shard = batches.next();
                if (shard != null && inFlight.tryAcquire()) {
                    publish(shard, batches.cut(shard));
                    continue;
                }
                // Nothing may leave now: what waits for a permit or its shard's confirm gathers.
                batches.refuseOverdue(System.nanoTime(), this::overloaded);
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

    /** Moves what the queue holds to the shards' batches. */
    private void drain() {
        for (Pending pending = queue.poll(); pending != null; pending = queue.poll()) {
            batches.add(pending);
        }
    }

    /**
     * Parks until something may let a batch leave (a purchase for a shard with none in flight,
     * enough purchases to fill a batch, a confirm) or the earliest admission deadline passes, at
     * most an admission timeout, so that the purchases queued meanwhile for busy shards are
     * refused in time too. The wake-up condition is set before looking again, so a request or a
     * confirm that comes between is seen by one or the other: a confirm always wakes a parked
     * sender, a request when its purchase may leave at once ({@link #enqueue}).
     */
    private void awaitWork() throws InterruptedException {
        wakeAtQueued = batches.missingToFill();
        String shard = batches.next();
        if (queue.isEmpty() && (shard == null || inFlight.availablePermits() == 0)) {
            long left = Math.min(batches.admissionLeft(System.nanoTime()), settings.admissionTimeout().toNanos());
            if (left > 0) {
                LockSupport.parkNanos(this, left);
            }
        }
        wakeAtQueued = 0;
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    /** Queues a keyed purchase for a claim of its key, and claims what waits if a slot is free. */
    private void awaitClaim(Pending pending) {
        synchronized (awaitingClaim) {
            if (closed) {
                pending.done().completeExceptionally(shuttingDown());
                return;
            }
            if (awaitingClaim.size() >= settings.queueCapacity()) {
                pending.done().completeExceptionally(storeNotAnswering(awaitingClaim.size() + " purchases await their claims"));
                return;
            }
            awaitingClaim.addLast(pending);
        }
        claimWaiting();
    }

    /**
     * While a claim slot is free, claims the keys of every keyed purchase waiting, in one round
     * trip, without waiting for the answer; the answer frees the slot and calls this again (on
     * the store's thread). What waits while every slot is taken gathers into the next claim: the
     * natural batch. A purchase that waited a whole store timeout for a slot is refused: the
     * store is not answering. Called by request threads and on the store's answers.
     */
    private void claimWaiting() {
        while (claimsInFlight.tryAcquire()) {
            List<Pending> batch = new ArrayList<>();
            synchronized (awaitingClaim) {
                long now = System.nanoTime();
                for (Pending pending = awaitingClaim.pollFirst(); pending != null; pending = awaitingClaim.pollFirst()) {
                    if (now - pending.enqueuedNanos() >= idempotency.maxWait().toNanos()) {
                        pending.done().completeExceptionally(storeNotAnswering(settings.maxClaimsInFlight() + " claims await it"));
                    } else {
                        batch.add(pending);
                    }
                }
            }
            if (batch.isEmpty()) {
                claimsInFlight.release();
                synchronized (awaitingClaim) {
                    if (awaitingClaim.isEmpty()) {
                        return; // a purchase queued from here on is claimed by whoever queued it
                    }
                }
                continue;
            }
            claim(batch);
        }
    }

    /** Claims the keys of {@code batch} in one call, holding one claim slot. */
    private void claim(List<Pending> batch) {
        List<Claim> claims = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            claims.add(pending.claim());
        }
        long start = System.nanoTime();
        CompletableFuture<List<Outcome>> outcomes;
        try {
            outcomes = idempotency.claim(claims);
        } catch (RuntimeException e) {
            outcomes = CompletableFuture.failedFuture(e);
        }
        outcomes.whenComplete((claimed, error) -> {
            idempotencyLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            claimsInFlight.release();
            try {
                afterClaims(batch, claimed, error);
            } catch (RuntimeException e) {
                // A bug: the purchases still get their answers (answering twice is harmless).
                log.error("checking the keys of a batch failed", e);
                answer(batch, new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                        "the Idempotency-Key could not be checked; retry later with the same Idempotency-Key", e));
            }
            if (error != null) {
                // Those that came meanwhile would wait for a claim as long again: answer them now.
                refuseAwaitingClaim(storeNotAnswering("a claim before it failed: " + rootMessage(error)));
            }
            claimWaiting();
        });
    }

    private void refuseAwaitingClaim(PublishRefusedException refused) {
        synchronized (awaitingClaim) {
            for (Pending pending = awaitingClaim.pollFirst(); pending != null; pending = awaitingClaim.pollFirst()) {
                pending.done().completeExceptionally(refused);
            }
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
     * Sorts the claimed purchases by what the store found: a conflict is answered 422, a retry of
     * a confirmed purchase 201, a store that did not answer 503 for all; the rest are queued.
     */
    private void afterClaims(List<Pending> batch, List<Outcome> outcomes, Throwable error) {
        if (error != null) {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (!(cause instanceof IdempotencyStoreUnavailableException)) {
                log.error("the idempotency check failed unexpectedly", cause);
            }
            answer(batch, new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                    "the Idempotency-Key could not be checked: the idempotency store is unavailable (" + cause.getMessage()
                            + "); the purchase was not accepted, retry later with the same Idempotency-Key", cause));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            Pending pending = batch.get(i);
            switch (outcomes.get(i)) {
                case CONFLICT -> {
                    idempotencyConflicts.increment();
                    pending.done().completeExceptionally(new IdempotencyConflictException("the Idempotency-Key was"
                            + " already used for a different purchase (store, customer, date or items differ); the first"
                            + " purchase stands and this one was not accepted: send a different purchase with a new"
                            + " Idempotency-Key"));
                }
                case CONFIRMED -> {
                    idempotencyReplays.increment();
                    pending.done().complete(null);
                }
                case FIRST, SAME -> enqueue(pending);
            }
        }
    }

    /** Publishes one batch of one shard; holds one in-flight permit, released when the batch is settled. */
    private void publish(String routingKey, List<Pending> batch) {
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
            settle(routingKey, batch, span, new PublishRefusedException(Reason.CHANNELS_EXHAUSTED,
                    "the API is overloaded (no free broker channel); retry later", e));
            return;
        } catch (RuntimeException e) {
            // AmqpException mostly; anything else must not stop the sender either.
            settle(routingKey, batch, span, new PublishRefusedException(Reason.UNREACHABLE,
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
            settle(routingKey, batch, span, refused);
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

    /**
     * Completes every request of a batch: accepted when {@code refused} is null, its keys then
     * recorded as confirmed first, so that a retry is answered without publishing again (the
     * record is written to the store before the answer leaves, and a retry's claim after it on
     * the same connection sees it); frees its permit and lets its shard send again, waking the
     * sender if it waits; ends the batch's span.
     */
    private void settle(String routingKey, List<Pending> batch, Span span, PublishRefusedException refused) {
        if (refused != null) {
            span.error(refused);
        }
        span.end();
        inFlight.release();
        batches.settled(routingKey);
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
        return new PublishRefusedException(Reason.OVERLOADED, "the API is overloaded (the purchase could not be"
                + " published within " + settings.admissionTimeout().toMillis() + " ms: the broker's confirms are slow);"
                + " retry later", null);
    }

    private void refuseAll() {
        drain();
        batches.refuseAll(shuttingDown());
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
        // Keyed purchases awaiting a claim slot are refused; those whose claim is in flight are
        // answered when the store answers (a claimed one finds the publisher closed).
        refuseAwaitingClaim(shuttingDown());
        if (claimsInFlight.tryAcquire(settings.maxClaimsInFlight(), idempotency.maxWait().toMillis(), TimeUnit.MILLISECONDS)) {
            claimsInFlight.release(settings.maxClaimsInFlight());
        }
        if (inFlight.tryAcquire(settings.maxInFlight(), properties.confirmTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            inFlight.release(settings.maxInFlight());
        }
    }
}
