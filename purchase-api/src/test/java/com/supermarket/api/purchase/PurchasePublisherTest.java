package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.supermarket.api.Deadlines;
import com.supermarket.api.broker.BlockedConnectionTracker;
import com.supermarket.api.broker.ShardRouting;
import com.supermarket.api.purchase.PublishRefusedException.Reason;
import com.supermarket.broker.MessageTracing;
import com.supermarket.contract.IdRanges;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.Topology;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.ConnectionBlockedEvent;
import org.springframework.amqp.rabbit.connection.ConnectionUnblockedEvent;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.util.unit.DataSize;

/** The group commit against a mocked template whose "broker" the test drives. */
class PurchasePublisherTest {

    /** Shard queues behind each sharded exchange. */
    private static final int SHARDS = 16;
    /** Store partitions: store s belongs to partition s mod 4, which owns 4 of the shard queues. */
    private static final int PARTITIONS = 4;

    private final RabbitTemplate template = mock(RabbitTemplate.class);
    private final BlockedConnectionTracker blocked = new BlockedConnectionTracker();
    /** Every sharded exchange has its queues (a mock's problem() is null), SHARDS of them. */
    private final ShardRouting routing = mock(ShardRouting.class);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** Every message the publisher sent, in order, with its confirm handle. */
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final List<PurchasePublisher> publishers = new ArrayList<>();
    /** The idempotency store of the publishers made next; off unless a test sets one. */
    private IdempotencyStore idempotency = IdempotencyStore.OFF;
    private final Deadlines deadlines = new Deadlines();

    /**
     * An idempotency store in memory, with the Redis store's semantics (first fingerprint wins,
     * claims answered in order), that records each call and can be made unavailable.
     */
    private static final class InMemoryIdempotencyStore implements IdempotencyStore {
        final Map<UUID, String> fingerprints = new ConcurrentHashMap<>();
        final Set<UUID> confirmedKeys = ConcurrentHashMap.newKeySet();
        volatile boolean recordsConfirms = true;
        final List<List<Claim>> calls = new CopyOnWriteArrayList<>();
        volatile boolean available = true;
        volatile Duration maxWait = Duration.ofSeconds(1);
        /** The claims are answered once this completes: a store that does not answer until then. */
        volatile CompletableFuture<Void> answering = CompletableFuture.completedFuture(null);
        final ExecutorService replies = Executors.newSingleThreadExecutor();

        @Override
        public boolean enabled() {
            return true;
        }

        @Override
        public Duration maxWait() {
            return maxWait;
        }

        @Override
        public CompletableFuture<List<Outcome>> claim(List<Claim> claims) {
            calls.add(List.copyOf(claims));
            if (!available) {
                return CompletableFuture.failedFuture(new IdempotencyStoreUnavailableException("connection refused", null));
            }
            List<Outcome> outcomes = new ArrayList<>();
            for (Claim claim : claims) {
                String held = fingerprints.putIfAbsent(claim.key(), claim.fingerprint());
                outcomes.add(held == null ? Outcome.FIRST : !held.equals(claim.fingerprint()) ? Outcome.CONFLICT
                        : confirmedKeys.contains(claim.key()) ? Outcome.CONFIRMED : Outcome.SAME);
            }
            // Answered from another thread, as Redis's replies are (on Lettuce's I/O thread).
            return answering.thenApplyAsync(answered -> outcomes, replies);
        }

        @Override
        public void confirmed(List<Claim> claims) {
            if (recordsConfirms) {
                claims.forEach(claim -> confirmedKeys.add(claim.key()));
            }
        }

        @Override
        public void close() {
            replies.shutdown();
        }
    }

    private record Sent(String exchange, String routingKey, Message message, CorrelationData correlation) {

        List<UUID> purchaseIds() {
            return PurchaseBatch.decode(message.getMessageProperties().getType(), message.getBody()).purchases()
                    .stream().map(Purchase::purchaseId).toList();
        }

        void ack() {
            correlation.getFuture().complete(new CorrelationData.Confirm(true, null));
        }

        void nack(String reason) {
            correlation.getFuture().complete(new CorrelationData.Confirm(false, reason));
        }
    }

    PurchasePublisherTest() {
        when(routing.partitionOf(anyInt())).thenAnswer(invocation -> StorePartition.ownerOf(invocation.getArgument(0), PARTITIONS));
        when(routing.routingKey(anyInt(), anyLong())).thenAnswer(invocation ->
                Topology.routingKey(invocation.getArgument(0), PARTITIONS, invocation.getArgument(1), SHARDS));
        doAnswer(invocation -> {
            sent.add(new Sent(invocation.getArgument(0), invocation.getArgument(1), invocation.getArgument(2),
                    invocation.getArgument(3)));
            return null;
        }).when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
    }

    @AfterEach
    void close() throws InterruptedException {
        for (PurchasePublisher publisher : publishers) {
            publisher.destroy();
        }
        idempotency.close();
        deadlines.destroy();
    }

    private PurchasePublisher publisher(boolean persistent, Duration confirmTimeout, PublishProperties.Batch batch) {
        PurchasePublisher publisher = new PurchasePublisher(template,
                new PublishProperties(persistent, confirmTimeout, Duration.ofSeconds(1), batch), blocked, routing, idempotency,
                deadlines, MessageTracing.OFF, registry);
        publishers.add(publisher);
        return publisher;
    }

    /** The group commit's settings, with the default linger (2 ms, 0.4 ms a purchase, at most 20 ms). */
    private static PublishProperties.Batch batch(int maxSize, int maxInFlight, int maxClaimsInFlight, int queueCapacity,
                                                 Duration admissionTimeout) {
        return new PublishProperties.Batch(maxSize, Duration.ofMillis(2), Duration.ofNanos(400_000), Duration.ofMillis(20),
                maxInFlight, maxClaimsInFlight, queueCapacity, admissionTimeout);
    }

    private PurchasePublisher publisher(int maxSize, int maxInFlight) {
        return publisher(true, Duration.ofSeconds(5), batch(maxSize, maxInFlight, 16, 100_000,
                Duration.ofSeconds(5)));
    }

    private static final PurchaseRequestParser PARSER = new PurchaseRequestParser(new IdRanges(1024, 100000),
            new PurchaseLimits(100, DataSize.ofKilobytes(64)));

    private static PurchaseRequest purchase(int store) {
        return PurchaseRequest.unkeyed(new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 1)), Instant.now()));
    }

    /** A purchase sent with an Idempotency-Key, as the parser makes it. */
    private static PurchaseRequest keyed(int store, String key, int item) {
        return PARSER.parse(Integer.toString(store), Integer.toString(store * 1000), "20210101",
                ("{\"items\":[{\"ItemID\":" + item + ",\"numberOfItems\":1}]}").getBytes(StandardCharsets.UTF_8), key);
    }

    private static Reason refusal(CompletableFuture<Void> future) {
        assertThat(future).isCompletedExceptionally();
        return future.handle((ok, error) -> ((PublishRefusedException) error).reason()).join();
    }

    private Sent awaitSent(int index) {
        await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() > index);
        return sent.get(index);
    }

    @Test
    void publishesOneBatchMessageToTheIngressWithTheRoutingKeyOfAShardQueueOfTheStoresPartition() {
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(5),
                batch(200, 16, 16, 1000, Duration.ofSeconds(1)));
        PurchaseRequest purchase = purchase(42);

        CompletableFuture<Void> done = publisher.submit(purchase);
        Sent message = awaitSent(0);
        message.ack();

        assertThat(done).succeedsWithin(Duration.ofSeconds(5));
        assertThat(message.exchange()).isEqualTo(Topology.INGRESS_EXCHANGE);
        assertThat(message.routingKey()).isEqualTo(Topology.routingKey(42 % PARTITIONS, PARTITIONS, 0, SHARDS));
        var props = message.message().getMessageProperties();
        assertThat(props.getType()).isEqualTo(PurchaseBatch.MESSAGE_TYPE);
        assertThat(props.getDeliveryMode()).isEqualTo(MessageDeliveryMode.PERSISTENT);
        assertThat(props.getContentType()).isEqualTo("application/json");
        assertThat(props.getHeaders()).doesNotContainKey("__TypeId__");
        assertThat(PurchaseBatch.decode(props.getType(), message.message().getBody()).purchases()).containsExactly(purchase.purchase());
        assertThat(registry.get("api.purchases.confirm.latency").timer().count()).isEqualTo(1);
        assertThat(registry.get("api.purchases.batch.size").summary().totalAmount()).isEqualTo(1);
    }

    @Test
    void canPublishTransientMessages() {
        PurchasePublisher publisher = publisher(false, Duration.ofSeconds(5),
                batch(200, 16, 16, 1000, Duration.ofSeconds(1)));

        CompletableFuture<Void> done = publisher.submit(purchase(1));

        Sent message = awaitSent(0);
        message.ack();
        assertThat(message.message().getMessageProperties().getDeliveryMode()).isEqualTo(MessageDeliveryMode.NON_PERSISTENT);
        assertThat(done).succeedsWithin(Duration.ofSeconds(5));
    }

    /**
     * The hammer: many threads publish at once while the "broker" confirms batches in random
     * order from other threads, acking most and nacking some. Every request's future completes,
     * and exactly as its one batch was confirmed; no purchase is in two messages or lost.
     */
    @Test
    void everyRequestIsAnsweredOnceAndExactlyAsItsBatchWasConfirmed() throws Exception {
        hammer(false);
    }

    /** The same with every purchase keyed: each batch's claims answered from another thread first. */
    @Test
    void everyKeyedRequestIsAnsweredOnceAndExactlyAsItsBatchWasConfirmed() throws Exception {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        // About answers, not speed: on a loaded machine a purchase may wait over a second for a
        // claim slot, which the default wait would answer 503.
        store.maxWait = Duration.ofSeconds(30);
        idempotency = store;

        hammer(true);

        assertThat(store.calls.stream().mapToInt(List::size).sum()).as("one claim per purchase").isEqualTo(16 * 500);
        assertThat(store.fingerprints).hasSize(16 * 500);
    }

    private void hammer(boolean keyed) throws Exception {
        ExecutorService broker = Executors.newFixedThreadPool(4);
        Map<UUID, Boolean> ackedById = new ConcurrentHashMap<>();
        AtomicInteger messages = new AtomicInteger();
        doAnswer(invocation -> {
            Sent message = new Sent(invocation.getArgument(0), invocation.getArgument(1), invocation.getArgument(2),
                    invocation.getArgument(3));
            messages.incrementAndGet();
            sent.add(message);
            boolean ack = ThreadLocalRandom.current().nextInt(10) > 0;
            for (UUID id : message.purchaseIds()) {
                assertThat(ackedById.put(id, ack)).as("purchase %s in two messages", id).isNull();
            }
            broker.execute(() -> {
                try {
                    TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextInt(500));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (ack) {
                    message.ack();
                } else {
                    message.nack("chaos");
                }
            });
            return null;
        }).when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
        // Keyed batches pass two more threads (the store's and the keyed sender) while they hold
        // their permit; on a loaded machine that can exceed 5 s of admission, and this test is
        // about answers, not speed.
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(5),
                batch(50, 4, 16, 100_000, Duration.ofSeconds(keyed ? 30 : 5)));
        int threads = 16;
        int perThread = 500;
        Map<UUID, CompletableFuture<Void>> futures = new ConcurrentHashMap<>();
        Map<UUID, Integer> storeById = new ConcurrentHashMap<>();
        AtomicInteger completions = new AtomicInteger();

        try (ExecutorService tills = Executors.newFixedThreadPool(threads)) {
            for (int t = 0; t < threads; t++) {
                tills.execute(() -> {
                    for (int i = 0; i < perThread; i++) {
                        int store = 1 + ThreadLocalRandom.current().nextInt(1024);
                        PurchaseRequest purchase = keyed ? keyed(store, UUID.randomUUID().toString(), 101) : purchase(store);
                        CompletableFuture<Void> future = publisher.submit(purchase);
                        future.whenComplete((ok, error) -> completions.incrementAndGet());
                        futures.put(purchase.purchase().purchaseId(), future);
                        storeById.put(purchase.purchase().purchaseId(), purchase.purchase().storeId());
                    }
                });
            }
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> futures.values().stream().allMatch(CompletableFuture::isDone));
        broker.shutdown();
        assertThat(futures).hasSize(threads * perThread);
        assertThat(completions).hasValue(threads * perThread);
        assertThat(ackedById.keySet()).as(() -> "refusals of the purchases never sent: " + futures.entrySet().stream()
                        .filter(entry -> !ackedById.containsKey(entry.getKey()))
                        .map(entry -> entry.getValue().handle((ok, error) -> String.valueOf(error)).join())
                        .collect(java.util.stream.Collectors.groupingBy(reason -> reason, java.util.stream.Collectors.counting())))
                .isEqualTo(futures.keySet());
        futures.forEach((id, future) -> {
            if (ackedById.get(id)) {
                assertThat(future).as("acked %s", id).isCompleted().isNotCompletedExceptionally();
            } else {
                assertThat(refusal(future)).as("nacked %s", id).isEqualTo(Reason.NACK);
            }
        });
        assertThat(messages.get()).as("batched").isLessThan(threads * perThread);
        Set<String> keys = new HashSet<>();
        for (Sent message : sent) {
            keys.add(message.routingKey());
            assertThat(message.purchaseIds()).as("a message holds purchases of one partition, routed to one of its shards")
                    .allSatisfy(id -> assertThat(shardKeysOf(StorePartition.ownerOf(storeById.get(id), PARTITIONS)))
                            .contains(message.routingKey()));
        }
        assertThat(keys).as("every shard queue was used").hasSize(SHARDS);
    }

    /** The routing keys of the shard queues of {@code partition}. */
    private static Set<String> shardKeysOf(int partition) {
        Set<String> keys = new HashSet<>();
        for (int turn = 0; turn < SHARDS / PARTITIONS; turn++) {
            keys.add(Topology.routingKey(partition, PARTITIONS, turn, SHARDS));
        }
        return keys;
    }

    /** A partition's batches go round its shard queues, one each in turn, whatever their stores. */
    @Test
    void aPartitionsBatchesGoRoundItsShardQueues() {
        PurchasePublisher publisher = publisher(100, 16);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 2 * SHARDS / PARTITIONS; i++) {
            CompletableFuture<Void> done = publisher.submit(purchase(1 + PARTITIONS * i));
            Sent message = awaitSent(i);
            message.ack();
            assertThat(done).succeedsWithin(Duration.ofSeconds(5));
            keys.add(message.routingKey());
        }

        List<String> round = keys.subList(0, SHARDS / PARTITIONS);
        assertThat(round).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(shardKeysOf(1));
        assertThat(keys.subList(SHARDS / PARTITIONS, keys.size())).containsExactlyElementsOf(round);
    }

    @Test
    void whatGathersWhileABatchIsInFlightLeavesTogetherUpToTheSizeCap() {
        PurchasePublisher publisher = publisher(4, 1);
        CompletableFuture<Void> first = publisher.submit(purchase(1));
        Sent inFlight = awaitSent(0);
        List<CompletableFuture<Void>> gathered = submitOnThePartitionOf(publisher, 1, 10);

        inFlight.ack();
        for (int i = 1; i <= 3; i++) {
            awaitSent(i).ack();
        }

        assertThat(first).succeedsWithin(Duration.ofSeconds(5));
        assertThat(gathered).allSatisfy(future -> assertThat(future).succeedsWithin(Duration.ofSeconds(5)));
        assertThat(sent).extracting(message -> message.purchaseIds().size()).containsExactly(1, 4, 4, 2);
    }

    /**
     * The group commit per partition: while a partition's batch awaits its confirm, that
     * partition's purchases wait and then leave together (to its next shard queue), however long
     * the confirm takes, while another partition's purchase leaves at once.
     */
    @Test
    void aPartitionsPurchasesGatherWhileItsBatchAwaitsTheConfirmWhileAnotherPartitionSendsAtOnce() {
        PurchasePublisher publisher = publisher(100, 16);
        CompletableFuture<Void> first = publisher.submit(purchase(1));
        Sent inFlight = awaitSent(0);
        List<CompletableFuture<Void>> gathered = submitOnThePartitionOf(publisher, 1, 3);
        PurchaseRequest otherPartition = purchase(2);
        CompletableFuture<Void> other = publisher.submit(otherPartition);

        Sent alone = awaitSent(1);
        assertThat(alone.purchaseIds()).containsExactly(otherPartition.purchase().purchaseId());
        alone.ack();
        assertThat(other).succeedsWithin(Duration.ofSeconds(5));
        awaitSenderParked(publisher);
        assertThat(sent).as("partition 1 waits for its confirm").hasSize(2);
        assertThat(gathered).allSatisfy(future -> assertThat(future).isNotDone());

        inFlight.ack();
        Sent together = awaitSent(2);
        assertThat(inFlight.routingKey()).isEqualTo(Topology.routingKey(1, PARTITIONS, 0, SHARDS));
        assertThat(together.routingKey()).as("the partition's next shard queue").isEqualTo(Topology.routingKey(1, PARTITIONS, 1, SHARDS));
        assertThat(together.purchaseIds()).hasSize(3);
        together.ack();
        assertThat(first).succeedsWithin(Duration.ofSeconds(5));
        assertThat(gathered).allSatisfy(future -> assertThat(future).succeedsWithin(Duration.ofSeconds(5)));
        assertThat(registry.get("api.purchases.batch.size").summary().totalAmount()).isEqualTo(5);
    }

    /**
     * Purchases that gathered while their partition's batch was in flight linger after its
     * confirm, and the sender wakes itself at the linger's end: the latecomers leave in the same
     * batch, with nothing else to wake the sender.
     */
    @Test
    void aBatchLingersAfterItsConfirmAndTakesThePurchasesThatComeMeanwhile() {
        Duration linger = Duration.ofSeconds(2);
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(5), new PublishProperties.Batch(100, linger,
                Duration.ZERO, linger, 16, 16, 100_000, Duration.ofSeconds(10)));
        CompletableFuture<Void> first = publisher.submit(purchase(1));
        Sent inFlight = awaitSent(0);
        List<CompletableFuture<Void>> gathered = new ArrayList<>(submitOnThePartitionOf(publisher, 1, 2));
        awaitSenderParked(publisher);

        inFlight.ack();
        assertThat(first).succeedsWithin(Duration.ofSeconds(5));
        gathered.addAll(submitOnThePartitionOf(publisher, 1, 3));

        Sent lingered = awaitSent(1);
        assertThat(lingered.purchaseIds()).hasSize(5);
        lingered.ack();
        assertThat(gathered).allSatisfy(future -> assertThat(future).succeedsWithin(Duration.ofSeconds(5)));
        assertThat(sent).hasSize(2);
    }

    @Test
    void aPartitionsFullBatchLeavesWithoutWaitingForItsConfirm() {
        PurchasePublisher publisher = publisher(4, 2);
        CompletableFuture<Void> first = publisher.submit(purchase(1));
        Sent inFlight = awaitSent(0);
        List<CompletableFuture<Void>> gathered = new ArrayList<>(submitOnThePartitionOf(publisher, 1, 1));
        awaitSenderParked(publisher);
        gathered.addAll(submitOnThePartitionOf(publisher, 1, 3));

        // Were the parked sender not woken by a full batch, nothing more would be sent until the ack.
        Sent full = awaitSent(1);
        assertThat(full.purchaseIds()).hasSize(4);
        inFlight.ack();
        full.ack();
        assertThat(first).succeedsWithin(Duration.ofSeconds(5));
        assertThat(gathered).allSatisfy(future -> assertThat(future).succeedsWithin(Duration.ofSeconds(5)));
    }

    /** Fewer permits than partitions: the partitions take turns, the one holding the oldest purchase first. */
    @Test
    void partitionsWaitingForAPermitTakeTurnsOldestFirst() {
        PurchasePublisher publisher = publisher(100, 1);
        publisher.submit(purchase(1));
        Sent inFlight = awaitSent(0);
        publisher.submit(purchase(3));
        publisher.submit(purchase(2));
        publisher.submit(purchase(3 + PARTITIONS));

        inFlight.ack();
        Sent second = awaitSent(1);
        second.ack();
        Sent third = awaitSent(2);
        third.ack();

        assertThat(second.routingKey()).isEqualTo(Topology.routingKey(3, PARTITIONS, 0, SHARDS));
        assertThat(second.purchaseIds()).hasSize(2);
        assertThat(third.routingKey()).isEqualTo(Topology.routingKey(2, PARTITIONS, 0, SHARDS));
    }

    /** Submits {@code count} purchases of other stores of the partition of {@code store}. */
    private static List<CompletableFuture<Void>> submitOnThePartitionOf(PurchasePublisher publisher, int store, int count) {
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            futures.add(publisher.submit(purchase(store + PARTITIONS * i)));
        }
        return futures;
    }

    /** Waits until the sender parks on the publisher: it has taken every purchase and none may leave. */
    private static void awaitSenderParked(PurchasePublisher publisher) {
        await().atMost(Duration.ofSeconds(10)).until(() -> Thread.getAllStackTraces().keySet().stream()
                .anyMatch(thread -> LockSupport.getBlocker(thread) == publisher));
    }

    @Test
    void aNackATimeoutOrAReturnRefusesExactlyThePurchasesOfThatBatch() {
        // The confirm timeout leaves the test time to answer the other batches on a busy machine.
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(3), batch(1, 12, 16, 1000,
                Duration.ofSeconds(10)));
        // Stores 1..4 are on four shards, so at least four messages are in flight together; a
        // batch of one is full, so it leaves while its shard's earlier one is in flight, and there
        // are enough permits for every purchase to leave before any confirm.
        Map<Integer, List<CompletableFuture<Void>>> byStore = new ConcurrentHashMap<>();
        Map<UUID, Integer> storeById = new ConcurrentHashMap<>();
        for (int i = 0; i < 3; i++) {
            for (int store = 1; store <= 4; store++) {
                PurchaseRequest purchase = purchase(store);
                storeById.put(purchase.purchase().purchaseId(), store);
                byStore.computeIfAbsent(store, s -> new CopyOnWriteArrayList<>()).add(publisher.submit(purchase));
            }
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> sent.stream().mapToInt(message -> message.purchaseIds().size()).sum() == 12);

        for (Sent message : sent) {
            switch (storeById.get(message.purchaseIds().getFirst())) {
                case 1 -> message.nack("disk full");
                case 2 -> { } // never confirmed
                case 3 -> {
                    message.correlation().setReturned(new ReturnedMessage(message.message(), 312, "NO_ROUTE",
                            Topology.INGRESS_EXCHANGE, message.routingKey()));
                    message.ack();
                }
                default -> message.ack();
            }
        }

        await().atMost(Duration.ofSeconds(10))
                .until(() -> byStore.values().stream().flatMap(List::stream).allMatch(CompletableFuture::isDone));
        assertThat(byStore.get(1)).allSatisfy(future -> assertThat(refusal(future)).isEqualTo(Reason.NACK));
        assertThat(byStore.get(2)).allSatisfy(future -> assertThat(refusal(future)).isEqualTo(Reason.CONFIRM_TIMEOUT));
        assertThat(byStore.get(3)).allSatisfy(future -> assertThat(refusal(future)).isEqualTo(Reason.UNROUTABLE));
        assertThat(byStore.get(4)).allSatisfy(future -> assertThat(future).isCompleted().isNotCompletedExceptionally());
    }

    /**
     * A nack with a reason comes from Spring AMQP (a channel closed under the confirms); the
     * broker's own, as a full shard queue's, has none.
     */
    @ParameterizedTest(name = "nack reason {0}")
    @CsvSource(value = {"disk full; disk full", "; a queue it goes to is full (its consumers are behind)"}, delimiter = ';')
    void publishThrowsTheRefusalWithTheNacksReason(String reason, String said) {
        PurchasePublisher publisher = publisher(200, 16);
        doAnswer(invocation -> {
            ((CorrelationData) invocation.getArgument(3)).getFuture().complete(new CorrelationData.Confirm(false, reason));
            return null;
        }).when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));

        assertThatThrownBy(() -> publisher.publish(purchase(1)))
                .isInstanceOfSatisfying(PublishRefusedException.class, e -> assertThat(e.reason()).isEqualTo(Reason.NACK))
                .hasMessageContaining(said.strip())
                .hasMessageNotContaining("null")
                .hasMessageContaining("may or may not have been accepted: retry later with the same Idempotency-Key");
    }

    @Test
    void aConnectionLostBeforeTheConfirmSaysThePurchaseMayHaveBeenAccepted() {
        PurchasePublisher publisher = publisher(200, 16);
        doAnswer(invocation -> {
            ((CorrelationData) invocation.getArgument(3)).getFuture()
                    .completeExceptionally(new java.io.IOException("connection reset"));
            return null;
        }).when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));

        assertThatThrownBy(() -> publisher.publish(purchase(1)))
                .isInstanceOfSatisfying(PublishRefusedException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNREACHABLE))
                .hasMessageContaining("may or may not have been accepted: retry later with the same Idempotency-Key");
    }

    @Test
    void anIdlePublisherSendsAPurchaseAtOnceWithoutWaitingForOthers() {
        PurchasePublisher publisher = publisher(200, 16);

        CompletableFuture<Void> done = publisher.submit(purchase(7));

        Sent alone = awaitSent(0);
        assertThat(alone.purchaseIds()).hasSize(1);
        alone.ack();
        assertThat(done).succeedsWithin(Duration.ofSeconds(5));
    }

    @Test
    void aBatchThatCannotGetInFlightInTimeIsRefusedNotParked() {
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(30),
                batch(200, 1, 16, 1000, Duration.ofMillis(200)));
        CompletableFuture<Void> inFlight = publisher.submit(purchase(1));
        awaitSent(0);

        CompletableFuture<Void> waiting = publisher.submit(purchase(2));

        await().atMost(Duration.ofSeconds(5)).until(waiting::isDone);
        assertThat(refusal(waiting)).isEqualTo(Reason.OVERLOADED);
        assertThat(inFlight).isNotDone();
        sent.get(0).ack();
        assertThat(inFlight).succeedsWithin(Duration.ofSeconds(5));
        assertThat(sent).hasSize(1);
    }

    @Test
    void aFullQueueIsRefusedAtOnce() {
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(3),
                batch(200, 1, 16, 1, Duration.ofSeconds(30)));
        publisher.submit(purchase(1));
        awaitSent(0);
        // The sender now waits for a permit holding one purchase; the queue takes one more.
        Set<Reason> refusals = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            CompletableFuture<Void> future = publisher.submit(purchase(2));
            if (future.isDone()) {
                refusals.add(refusal(future));
            }
        }
        assertThat(refusals).containsExactly(Reason.OVERLOADED);
        sent.get(0).ack();
    }

    @Test
    void anUnreachableBrokerOrAnExhaustedChannelPoolRefusesTheBatch() {
        PurchasePublisher publisher = publisher(200, 16);
        doThrow(new AmqpConnectException(new java.net.ConnectException("refused")))
                .when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
        assertThatThrownBy(() -> publisher.publish(purchase(1))).isInstanceOfSatisfying(PublishRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.UNREACHABLE));

        doThrow(new AmqpTimeoutException("no channel"))
                .when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
        assertThatThrownBy(() -> publisher.publish(purchase(1))).isInstanceOfSatisfying(PublishRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.CHANNELS_EXHAUSTED));
    }

    @Test
    void aBlockedConnectionIsRefusedWithoutPublishingUntilUnblocked() {
        PurchasePublisher publisher = publisher(200, 16);
        blocked.blocked(new ConnectionBlockedEvent(mock(org.springframework.amqp.rabbit.connection.Connection.class),
                "low on memory"));

        assertThatThrownBy(() -> publisher.publish(purchase(1)))
                .isInstanceOfSatisfying(PublishRefusedException.class, e -> assertThat(e.reason()).isEqualTo(Reason.BLOCKED))
                .hasMessageContaining("low on memory");
        verify(template, never()).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));

        blocked.unblocked(new ConnectionUnblockedEvent(mock(org.springframework.amqp.rabbit.connection.Connection.class)));
        CompletableFuture<Void> done = publisher.submit(purchase(1));
        awaitSent(0).ack();
        assertThat(done).succeedsWithin(Duration.ofSeconds(5));
    }

    @Test
    void closingRefusesWhatWasNotPublished() throws InterruptedException {
        PurchasePublisher publisher = publisher(true, Duration.ofMillis(300),
                batch(200, 1, 16, 1000, Duration.ofSeconds(30)));
        publisher.submit(purchase(1));
        awaitSent(0);
        CompletableFuture<Void> waiting = publisher.submit(purchase(2));

        publisher.destroy();

        assertThat(refusal(waiting)).isEqualTo(Reason.INTERRUPTED);
        assertThat(refusal(publisher.submit(purchase(3)))).isEqualTo(Reason.INTERRUPTED);
    }

    @Test
    void aReusedKeyWithAnotherBodyIsRefusedAndNotPublishedWhileTheSameBodyIsPublishedAgain() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        idempotency = store;
        PurchasePublisher publisher = publisher(200, 16);
        PurchaseRequest first = keyed(7, "till-1/42", 101);

        store.recordsConfirms = false; // a retry of a purchase not known to be confirmed
        CompletableFuture<Void> accepted = publisher.submit(first);
        awaitSent(0).ack();
        assertThat(accepted).succeedsWithin(Duration.ofSeconds(5));

        CompletableFuture<Void> retry = publisher.submit(keyed(7, "till-1/42", 101));
        awaitSent(1).ack();
        assertThat(retry).succeedsWithin(Duration.ofSeconds(5));
        assertThat(sent.get(1).purchaseIds()).containsExactly(first.purchase().purchaseId());

        CompletableFuture<Void> other = publisher.submit(keyed(7, "till-1/42", 102));
        await().atMost(Duration.ofSeconds(5)).until(other::isDone);
        assertThat(other).failsWithin(Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOf(IdempotencyConflictException.class)
                .withMessageContaining("already used for a different purchase");
        assertThatThrownBy(() -> publisher.publish(keyed(7, "till-1/42", 103))).isInstanceOf(IdempotencyConflictException.class);
        assertThat(sent).hasSize(2);
        assertThat(registry.get("api.purchases.idempotency.conflicts").counter().count()).isEqualTo(2);
        assertThat(store.fingerprints).containsEntry(first.idempotencyKey().key(), first.idempotencyKey().fingerprint());
    }

    /** A retry after its purchase was confirmed (a lost 201) is answered without publishing it again. */
    @Test
    void aRetryOfAConfirmedPurchaseIsAnsweredFromTheStoreWithoutPublishingAgain() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        idempotency = store;
        PurchasePublisher publisher = publisher(200, 16);
        PurchaseRequest first = keyed(7, "till-1/43", 101);
        CompletableFuture<Void> refused = publisher.submit(keyed(8, "till-1/44", 101));
        awaitSent(0).nack("disk full");
        assertThat(refusal(refused)).isEqualTo(Reason.NACK);
        assertThat(store.confirmedKeys).as("a nacked purchase is not recorded as confirmed").isEmpty();

        CompletableFuture<Void> accepted = publisher.submit(first);
        awaitSent(1).ack();
        assertThat(accepted).succeedsWithin(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5)).until(() -> store.confirmedKeys.contains(first.idempotencyKey().key()));

        CompletableFuture<Void> retry = publisher.submit(keyed(7, "till-1/43", 101));
        assertThat(retry).succeedsWithin(Duration.ofSeconds(5));
        assertThat(sent).hasSize(2);
        assertThat(registry.get("api.purchases.idempotency.replays").counter().count()).isEqualTo(1);
        assertThatThrownBy(() -> publisher.publish(keyed(7, "till-1/43", 102))).as("another body is still refused")
                .isInstanceOf(IdempotencyConflictException.class);
    }

    @Test
    void theKeysThatGatherWhileAClaimIsOutAreClaimedInOneCallAndOnlyTheConflictingPurchaseIsLeftOut() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        store.answering = new CompletableFuture<>();
        idempotency = store;
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(5),
                batch(200, 16, 1, 100_000, Duration.ofSeconds(5)));
        PurchaseRequest keyed = keyed(1, "a", 101);
        CompletableFuture<Void> first = publisher.submit(keyed); // takes the one claim slot, unanswered
        await().atMost(Duration.ofSeconds(5)).until(() -> store.calls.size() == 1);
        PurchaseRequest sameKeyOtherBody = keyed(1, "a", 102);
        PurchaseRequest retry = keyed(1, "a", 101);
        PurchaseRequest otherKey = keyed(1 + SHARDS, "a", 101);
        PurchaseRequest unkeyed = purchase(1);
        Map<PurchaseRequest, CompletableFuture<Void>> futures = new java.util.LinkedHashMap<>();
        futures.put(keyed, first);
        for (PurchaseRequest purchase : List.of(sameKeyOtherBody, retry, otherKey, unkeyed)) {
            futures.put(purchase, publisher.submit(purchase));
        }

        // The unkeyed purchase leaves at once, without waiting for the claims.
        Sent unkeyedPart = awaitSent(0);
        unkeyedPart.ack();
        assertThat(unkeyedPart.purchaseIds()).containsExactly(unkeyed.purchase().purchaseId());
        store.answering.complete(null);
        // The claimed purchases of one partition: the first leaves at once, the rest on its confirm.
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            sent.forEach(Sent::ack);
            return futures.values().stream().allMatch(CompletableFuture::isDone);
        });

        assertThat(store.calls).as("what gathered while the first claim was out: one call")
                .extracting(calls -> calls.stream().map(IdempotencyStore.Claim::key).toList())
                .containsExactly(List.of(keyed.idempotencyKey().key()), List.of(keyed.idempotencyKey().key(),
                        keyed.idempotencyKey().key(), otherKey.idempotencyKey().key()));
        assertThat(sent.stream().skip(1).flatMap(message -> message.purchaseIds().stream()))
                .containsExactlyInAnyOrder(keyed.purchase().purchaseId(), keyed.purchase().purchaseId(),
                        otherKey.purchase().purchaseId());
        assertThat(futures.get(sameKeyOtherBody)).failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOf(IdempotencyConflictException.class);
        for (PurchaseRequest purchase : List.of(keyed, retry, otherKey, unkeyed)) {
            assertThat(futures.get(purchase)).succeedsWithin(Duration.ofSeconds(5));
        }
    }

    @Test
    void aClaimAwaitingItsAnswerHoldsNoInFlightPermitSoUnkeyedPurchasesGoOn() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        store.answering = new CompletableFuture<>();
        idempotency = store;
        PurchasePublisher publisher = publisher(200, 1);
        PurchaseRequest keyed = keyed(1, "a", 101);
        CompletableFuture<Void> keyedDone = publisher.submit(keyed);
        await().atMost(Duration.ofSeconds(5)).until(() -> store.calls.size() == 1);

        PurchaseRequest unkeyed = purchase(2);
        CompletableFuture<Void> unkeyedDone = publisher.submit(unkeyed);
        Sent first = awaitSent(0);
        first.ack();

        assertThat(first.purchaseIds()).containsExactly(unkeyed.purchase().purchaseId());
        assertThat(unkeyedDone).succeedsWithin(Duration.ofSeconds(5));
        assertThat(keyedDone).isNotDone();
        store.answering.complete(null);
        Sent second = awaitSent(1);
        second.ack();
        assertThat(second.purchaseIds()).containsExactly(keyed.purchase().purchaseId());
        assertThat(keyedDone).succeedsWithin(Duration.ofSeconds(5));
    }

    /** Claims that take the store's whole timeout bound how long the keyed purchases behind them wait. */
    @Test
    void aKeyedBatchThatWaitedAStoreTimeoutForAClaimSlotIsRefusedWithoutAClaim() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        store.answering = new CompletableFuture<>();
        store.maxWait = Duration.ofMillis(200);
        idempotency = store;
        PurchasePublisher publisher = publisher(true, Duration.ofSeconds(5),
                batch(200, 2, 1, 1000, Duration.ofSeconds(5)));
        CompletableFuture<Void> first = publisher.submit(keyed(1, "a", 101));
        await().atMost(Duration.ofSeconds(5)).until(() -> store.calls.size() == 1);
        long secondSent = System.nanoTime();
        CompletableFuture<Void> second = publisher.submit(keyed(1, "b", 101));
        await().atMost(Duration.ofSeconds(5)).until(() -> System.nanoTime() - secondSent > store.maxWait.toNanos());

        store.answering.complete(null); // the first claim's slot frees; the second has waited too long
        awaitSent(0).ack();

        assertThat(first).succeedsWithin(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5)).until(second::isDone);
        assertThat(refusal(second)).isEqualTo(Reason.IDEMPOTENCY_UNAVAILABLE);
        assertThat(second).failsWithin(Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withMessageContaining("the idempotency store is not answering (1 claims await it)")
                .withMessageContaining("retry later with the same Idempotency-Key");
        assertThat(store.calls).hasSize(1);
        assertThat(sent).hasSize(1);
    }

    @Test
    void purchasesWithoutAKeyNeverTouchTheStore() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        idempotency = store;
        PurchasePublisher publisher = publisher(200, 16);

        CompletableFuture<Void> done = publisher.submit(purchase(3));
        awaitSent(0).ack();

        assertThat(done).succeedsWithin(Duration.ofSeconds(5));
        assertThat(store.calls).isEmpty();
    }

    @Test
    void anUnavailableStoreRefusesTheKeyedPurchasesWith503AndPublishesTheOthers() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        store.available = false;
        idempotency = store;
        PurchasePublisher publisher = publisher(200, 1);
        publisher.submit(purchase(SHARDS));
        Sent blocker = awaitSent(0);
        CompletableFuture<Void> keyed = publisher.submit(keyed(1, "a", 101));
        PurchaseRequest unkeyed = purchase(1);
        CompletableFuture<Void> plain = publisher.submit(unkeyed);

        blocker.ack();
        Sent batch = awaitSent(1);
        batch.ack();

        assertThat(batch.purchaseIds()).containsExactly(unkeyed.purchase().purchaseId());
        assertThat(plain).succeedsWithin(Duration.ofSeconds(5));
        assertThat(refusal(keyed)).isEqualTo(Reason.IDEMPOTENCY_UNAVAILABLE);
        assertThatThrownBy(() -> publisher.publish(keyed(2, "b", 101)))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.IDEMPOTENCY_UNAVAILABLE))
                .hasMessageContaining("idempotency store is unavailable (connection refused)")
                .hasMessageContaining("was not accepted");
        assertThat(sent).hasSize(2);

        // A batch that lost every purchase gave its permit back: with one permit, publishing goes on.
        store.available = true;
        CompletableFuture<Void> afterwards = publisher.submit(keyed(2, "b", 101));
        awaitSent(2).ack();
        assertThat(afterwards).succeedsWithin(Duration.ofSeconds(5));
    }
}
