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
 * sender thread alone touches the grouping state; the purchases awaiting a claim are guarded by
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
        this.idempotencyReplays = Counter.builder("purchases.idempotency.replays")
                .description("Retries of purchases whose publish was confirmed, answered 201 without publishing them again")
                .register(registry);
        this.sender = Thread.ofPlatform().name("purchase-sender").daemon().start(this::send);
    }

    /**
     * One purchase waiting for its batch's confirm; {@code claim} is null unless it has a key to
     * check (and, once published, to record as confirmed). It may wait for a permit until
     * {@code admitByNanos}: the admission timeout, plus the store's longest wait for a keyed one.
     */
    private record Pending(String routingKey, byte[] encoded, Claim claim, long enqueuedNanos, long admitByNanos,
                           CompletableFuture<Void> done) {
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
        Claim claim = idempotency.enabled() ? request.idempotencyKey() : null;
        long now = System.nanoTime();
        long admitBy = now + settings.admissionTimeout().toNanos() + (claim == null ? 0 : idempotency.maxWait().toNanos());
        Pending pending = new Pending(Topology.routingKey(purchase.storeId(), settings.buckets()),
                WireFormat.encode(purchase), claim, now, admitBy, new CompletableFuture<>());
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
        int fills = lingerFills;
        if (fills > 0 && queue.size() >= fills) {
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
                if (waitingCount == 0) {
                    add(queue.take()); // idle: block until a purchase comes, then publish it at once
                }
                drain();
                Pending oldest = oldest();
                long admissionLeft = oldest.admitByNanos() - System.nanoTime();
                // While the sender waits for a permit, new purchases gather: the natural batch.
                if (!inFlight.tryAcquire(Math.max(0, admissionLeft), TimeUnit.NANOSECONDS)) {
                    refuseOverdue();
                    continue;
                }
                drain();
                publish(oldest.routingKey(), cut(oldest.routingKey()));
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

    /**
     * Completes every request of a batch: accepted when {@code refused} is null, its keys then
     * recorded as confirmed first, so that a retry is answered without publishing again (the
     * record is written to the store before the answer leaves, and a retry's claim after it on
     * the same connection sees it); frees its permit.
     */
    private void settle(List<Pending> batch, PublishRefusedException refused) {
        inFlight.release();
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
        return new PublishRefusedException(Reason.OVERLOADED, "the API is overloaded ("
                + settings.maxInFlight() + " batches await the broker's confirms); retry later", null);
    }

    private void refuseOverdue() {
        PublishRefusedException refused = overloaded();
        long now = System.nanoTime();
        for (ArrayDeque<Pending> bucket : waiting.values()) {
            while (!bucket.isEmpty() && now - bucket.peekFirst().admitByNanos() >= 0) {
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
