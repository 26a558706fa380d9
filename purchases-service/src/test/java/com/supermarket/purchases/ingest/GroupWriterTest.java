package com.supermarket.purchases.ingest;

import static com.supermarket.purchases.ingest.FakeRepository.purchaseAt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

/**
 * The group writer against consumer channels (mocks), messages that park on demand, and a real
 * {@link BatchWriter} over an in-memory store that fails on demand.
 */
class GroupWriterTest {

    private static final int PATIENCE_MILLIS = 5_000;
    private static final Duration NEVER_DUE = Duration.ofHours(1);

    private final FakeRepository repository = new FakeRepository();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StorageState state = new StorageState();
    private final Channel a = mock(Channel.class);
    private final Channel b = mock(Channel.class);
    private GroupWriter groupWriter;

    @AfterEach
    void stop() {
        if (groupWriter != null) {
            groupWriter.stop();
        }
    }

    @Test
    void writesTheMessagesOfSeveralChannelsInOneWriteAndAcksEachChannelOnceUpToItsHighestTag() throws Exception {
        start(NEVER_DUE, 4);

        groupWriter.submit(a, 1, message(purchaseAt(1)));
        groupWriter.submit(b, 1, message(purchaseAt(2)));
        groupWriter.submit(a, 2, message(purchaseAt(3), purchaseAt(4)));
        groupWriter.submit(b, 2, message(purchaseAt(5)));

        verify(a, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        verify(b, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        verify(a, never()).basicAck(eq(1L), anyBoolean());
        verify(b, never()).basicAck(eq(1L), anyBoolean());
        assertThat(repository.batches).as("one write of every purchase").containsExactly(5);
        assertThat(registry.summary("purchases.write.messages").totalAmount()).isEqualTo(4);
        assertThat(groupWriter.unsettled()).isZero();
    }

    @Test
    void writesAMessageAloneOnceItHasWaitedTheGroupDelay() throws Exception {
        start(Duration.ofMillis(20), 40);
        Purchase purchase = purchaseAt(1);

        groupWriter.submit(a, 1, message(purchase));

        verify(a, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        assertThat(repository.stored).containsOnlyKeys(purchase.purchaseId());
    }

    @Test
    void neverAcknowledgesPastAMessageStillParking() throws Exception {
        start(NEVER_DUE, 3);
        CountDownLatch parked = new CountDownLatch(1);
        FakeMessage parking = message(purchaseAt(1)).parking(parked::await);

        groupWriter.submit(a, 1, parking);
        groupWriter.submit(a, 2, message(purchaseAt(2)));
        groupWriter.submit(b, 1, message(purchaseAt(3)));

        verify(b, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        verify(a, never()).basicAck(anyLong(), anyBoolean());
        parked.countDown();
        verify(a, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        verify(a, never()).basicAck(eq(1L), anyBoolean());
    }

    @Test
    void aFailedParkRequeuesItsMessageAloneAndItsChannelMovesOnPastIt() throws Exception {
        start(NEVER_DUE, 2);

        groupWriter.submit(a, 1, message(purchaseAt(1)).parking(() -> {
            throw new IOException("the broker did not confirm a parked purchase");
        }));
        groupWriter.submit(a, 2, message(purchaseAt(2)));

        verify(a, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        InOrder settled = inOrder(a);
        settled.verify(a).basicNack(1, false, true);
        settled.verify(a).basicAck(2, true);
        assertThat(registry.counter("purchases.errors").count()).isEqualTo(1);
    }

    @Test
    void aPurchaseTheStoreRefusesIsParkedByItsMessageWhichIsThenAcknowledged() throws Exception {
        start(NEVER_DUE, 2);
        repository.refusedStore = 666;
        Purchase refused = purchaseAt(666);
        FakeMessage withRefused = message(purchaseAt(1), refused);
        FakeMessage fine = message(purchaseAt(2));

        groupWriter.submit(a, 1, withRefused);
        groupWriter.submit(a, 2, fine);

        verify(a, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        assertThat(withRefused.parkedRefused).containsExactly(Set.of(refused.purchaseId()));
        assertThat(fine.parkedRefused).as("settled once").hasSize(1);
        assertThat(repository.stored).doesNotContainKey(refused.purchaseId()).hasSize(2);
    }

    @Test
    void aGroupHeldWhileTheStoreIsDownTakesInTheMessagesArrivingMeanwhileAndIsWrittenOnceBack() throws Exception {
        start(Duration.ZERO, 40);
        repository.downForStore = 13;

        groupWriter.submit(a, 1, message(purchaseAt(13)));
        await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null);
        groupWriter.submit(b, 1, message(purchaseAt(1)));
        groupWriter.submit(a, 2, message(purchaseAt(2)));
        int attempts = repository.attempts.get();
        await("retried with the arrivals").atMost(Duration.ofSeconds(5)).until(() -> repository.attempts.get() > attempts + 2);
        verify(a, never()).basicAck(anyLong(), anyBoolean());
        verify(b, never()).basicAck(anyLong(), anyBoolean());
        repository.downForStore = -1;

        verify(a, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        verify(b, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        assertThat(repository.batches).as("one write once the store is back").containsExactly(3);
        assertThat(state.failure()).isNull();
    }

    @Test
    void anUnexpectedErrorRequeuesEveryMessageOfTheGroupAndRejectsEachAtItsLastAttempt() throws Exception {
        start(NEVER_DUE, 2);
        repository.unexpected = new IllegalStateException("a bug in the store");
        byte[] first = body();
        byte[] second = body();

        for (long delivery = 1; delivery <= 2; delivery++) {
            groupWriter.submit(a, delivery, message(first, purchaseAt(1)));
            groupWriter.submit(b, delivery, message(second, purchaseAt(2)));
            verify(a, timeout(PATIENCE_MILLIS)).basicNack(delivery, false, true);
            verify(b, timeout(PATIENCE_MILLIS)).basicNack(delivery, false, true);
        }
        verify(a, never()).basicReject(anyLong(), anyBoolean());
        groupWriter.submit(a, 3, message(first, purchaseAt(1)));
        groupWriter.submit(b, 3, message(second, purchaseAt(2)));

        verify(a, timeout(PATIENCE_MILLIS)).basicReject(3, false);
        verify(b, timeout(PATIENCE_MILLIS)).basicReject(3, false);
        verify(a, never()).basicAck(anyLong(), anyBoolean());
        verify(b, never()).basicAck(anyLong(), anyBoolean());
        assertThat(registry.counter("purchases.errors").count()).isEqualTo(6);
    }

    @Test
    void stoppingAcknowledgesNothingUnwrittenAndLeavesWaitingMessagesToTheBroker() throws Exception {
        start(NEVER_DUE, 40);
        groupWriter.submit(a, 1, message(purchaseAt(1)));

        groupWriter.stop();
        groupWriter.submit(a, 2, message(purchaseAt(2)));

        assertThat(repository.attempts.get()).isZero();
        verify(a, never()).basicAck(anyLong(), anyBoolean());
        verify(a, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
        verify(a, never()).basicReject(anyLong(), anyBoolean());
    }

    /**
     * Consumer threads, each on its own channel, hand over many messages while the writer writes
     * (some of them parking, which settles out of order): each purchase is stored once and each
     * channel's acks rise to its last message, with nothing requeued.
     */
    @Test
    void hammer() throws Exception {
        start(Duration.ofMillis(1), 40);
        int consumers = 4;
        int perConsumer = 2_000;
        List<Channel> channels = new ArrayList<>();
        Map<Channel, List<Long>> acked = new ConcurrentHashMap<>();
        for (int c = 0; c < consumers; c++) {
            Channel channel = mock(Channel.class);
            List<Long> tags = new CopyOnWriteArrayList<>();
            doAnswer(call -> tags.add(call.getArgument(0))).when(channel).basicAck(anyLong(), eq(true));
            acked.put(channel, tags);
            channels.add(channel);
        }
        try (ExecutorService consuming = Executors.newFixedThreadPool(consumers)) {
            List<Future<?>> running = new ArrayList<>();
            for (Channel channel : channels) {
                running.add(consuming.submit(() -> {
                    for (long tag = 1; tag <= perConsumer; tag++) {
                        FakeMessage message = message(purchaseAt((int) (tag % 100) + 1));
                        groupWriter.submit(channel, tag, tag % 50 == 0 ? message.parking(Thread::yield) : message);
                    }
                }));
            }
            for (Future<?> each : running) {
                each.get();
            }
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> acked.values().stream()
                .allMatch(tags -> !tags.isEmpty() && tags.getLast() == perConsumer));
        assertThat(repository.stored).hasSize(consumers * perConsumer);
        for (List<Long> tags : acked.values()) {
            assertThat(tags).as("acks rise").isSorted().doesNotHaveDuplicates();
        }
        for (Channel channel : channels) {
            verify(channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
        }
        assertThat(groupWriter.unsettled()).isZero();
    }

    private void start(Duration groupDelay, int groupMessages) {
        IngestProperties properties =
                new IngestProperties(1, 10, groupDelay, groupMessages, Duration.ofMillis(1), Duration.ofMillis(4), 3);
        groupWriter = new GroupWriter(new BatchWriter(repository, state, properties, registry), properties, registry);
        groupWriter.start();
    }

    private static FakeMessage message(Purchase... purchases) {
        return message(body(), purchases);
    }

    private static FakeMessage message(byte[] body, Purchase... purchases) {
        return new FakeMessage(body, List.of(purchases));
    }

    private static byte[] body() {
        return UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
    }

    @FunctionalInterface
    private interface Park {
        void park() throws Exception;
    }

    /** A decoded message: parks when told to (or when one of its purchases is refused), recording what it was told. */
    private static final class FakeMessage implements GroupWriter.Delivery {
        private final byte[] body;
        private final List<Purchase> purchases;
        private Park park;
        final List<Set<UUID>> parkedRefused = new CopyOnWriteArrayList<>();

        FakeMessage(byte[] body, List<Purchase> purchases) {
            this.body = body;
            this.purchases = purchases;
        }

        FakeMessage parking(Park park) {
            this.park = park;
            return this;
        }

        @Override
        public List<Purchase> purchases() {
            return purchases;
        }

        @Override
        public boolean parks(Set<UUID> refused) {
            return park != null || purchases.stream().anyMatch(p -> refused.contains(p.purchaseId()));
        }

        @Override
        public void settle(Set<UUID> refused) throws Exception {
            parkedRefused.add(refused);
            if (park != null) {
                park.park();
            }
        }

        @Override
        public byte[] body() {
            return body;
        }
    }
}
