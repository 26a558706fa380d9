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
 * before a batch is published, the sender claims the keys of its keyed purchases in one round
 * trip, and goes on with the next batch meanwhile; the answer hands the batch (still holding its
 * in-flight permit) to the {@code purchase-keyed-sender} thread, which publishes it. A key already bound to another purchase's fingerprint completes that purchase with an
 * {@link IdempotencyConflictException} (422) and takes it out of the batch; the same fingerprint
 * is a retry and is published as before (the consumers deduplicate its id). A store that does
 * not answer refuses the batch's keyed purchases ({@link Reason#IDEMPOTENCY_UNAVAILABLE}, 503,
 * nothing published for them) and publishes the rest. Purchases without a key never touch it.
 *
 * <p>Thread-safe: request threads only enqueue and wait on their own future; the sender thread
 * alone touches the grouping state; the keyed sender only publishes and settles; confirm callbacks (the AMQP connection's thread, or the
 * timeout's) complete futures, each exactly once because each purchase sits in exactly one
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
        // sender refuses the overdue, the key check and the confirm have deadlines, a stop refuses
        // what waits). A timed wait of a virtual thread costs more (see Deadlines).
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
     * Publishes a batch (holding one in-flight permit). One with keyed purchases first has their
     * keys claimed, without the sender waiting for the answer: the answer (on the store's I/O
     * thread) hands the batch to the keyed sender thread, which publishes what may be published.
     */
    private void claimAndPublish(String routingKey, List<Pending> batch) {
        List<Claim> claims = null;
        for (Pending pending : batch) {
            if (pending.claim() != null) {
                if (claims == null) {
                    claims = new ArrayList<>();
                }
                claims.add(pending.claim());
            }
        }
        if (claims == null) {
            publish(routingKey, batch);
            return;
        }
        long start = System.nanoTime();
        CompletableFuture<List<Outcome>> outcomes;
        try {
            outcomes = idempotency.claim(claims);
        } catch (RuntimeException e) {
            outcomes = CompletableFuture.failedFuture(e);
        }
        outcomes.whenCompleteAsync((claimed, error) -> {
            idempotencyLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            List<Pending> publishable;
            try {
                publishable = afterClaims(batch, claimed, error);
            } catch (RuntimeException e) {
                // A bug: the batch still gets its answers and its permit back (settling twice is harmless).
                log.error("checking the keys of a batch failed", e);
                settle(batch, new PublishRefusedException(Reason.IDEMPOTENCY_UNAVAILABLE,
                        "the Idempotency-Key could not be checked; retry later with the same Idempotency-Key", e));
                return;
            }
            if (publishable.isEmpty()) {
                inFlight.release();
            } else {
                publish(routingKey, publishable);
            }
        }, keyedSender);
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

    private void refuseOverdue() {
        PublishRefusedException refused = new PublishRefusedException(Reason.OVERLOADED, "the API is overloaded ("
                + settings.maxInFlight() + " batches await the broker's confirms); retry later", null);
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
        // Batches awaiting their key claims hold permits too, and the keyed sender publishes them.
        long wait = idempotency.maxWait().toMillis() + properties.confirmTimeout().toMillis();
        if (inFlight.tryAcquire(settings.maxInFlight(), wait, TimeUnit.MILLISECONDS)) {
            inFlight.release(settings.maxInFlight());
        }
        keyedSender.shutdown();
    }
}
