package com.supermarket.purchases.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.broker.MessageTracing;
import com.supermarket.broker.Parking;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.purchases.storage.PurchaseRepository;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;

class PurchaseBatchListenerTest {

    private final FakeRepository repository = new FakeRepository();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StorageState state = new StorageState();
    private final IngestProperties properties = new IngestProperties(1, 10, Duration.ofMillis(1), Duration.ofMillis(4), 3);
    private final BatchWriter writer = new BatchWriter(repository, state, properties, registry);
    /** The channel of the publishing connection, where parking publishes. */
    private final Channel publishing = publishingChannel();
    private final PurchaseBatchListener listener = new PurchaseBatchListener(writer, parkingOn(publishing), properties,
            MessageTracing.OFF, registry);
    private final Channel channel = mock(Channel.class);

    @Test
    void storesEveryPurchaseOfABatchThenAcknowledgesItWithAMultipleAck() throws Exception {
        Purchase first = purchase(1);
        Purchase second = purchase(2);

        listener.onMessage(batch(5, WireFormat.encode(first), WireFormat.encode(second)), channel);

        assertThat(repository.stored).containsOnlyKeys(first.purchaseId(), second.purchaseId());
        assertThat(repository.batches).containsExactly(2);
        verify(channel).basicAck(5, true);
        assertThat(registry.counter("purchases.stored").count()).isEqualTo(2);
    }

    @Test
    void acknowledgesOnTheChannelTheMessageCameOnNotThroughTheCachingProxy() throws Exception {
        ChannelProxy proxy = mock(ChannelProxy.class);
        when(proxy.getTargetChannel()).thenReturn(channel);

        ShardConsumers.onDeliveringChannel(listener).onMessage(batch(5, WireFormat.encode(purchase(1))), proxy);

        verify(channel).basicAck(5, true);
        verify(proxy, never()).basicAck(anyLong(), anyBoolean());
    }

    @Test
    void leavesAMessageWhoseChannelClosedWhileItWasStoredToTheBroker() throws Exception {
        Purchase stored = purchase(1);
        doThrow(new AlreadyClosedException(new ShutdownSignalException(true, false, null, null)))
                .when(channel).basicAck(anyLong(), anyBoolean());

        listener.onMessage(batch(5, WireFormat.encode(stored)), channel);

        assertThat(repository.stored).containsOnlyKeys(stored.purchaseId());
        verify(channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
        assertThat(registry.counter("purchases.errors").count()).as("not an error of the message").isZero();
    }

    @Test
    void storesABatchOfOnePurchase() throws Exception {
        Purchase single = purchase(1);

        listener.onMessage(batch(3, WireFormat.encode(single)), channel);

        assertThat(repository.stored).containsOnlyKeys(single.purchaseId());
        verify(channel).basicAck(3, true);
    }

    @Test
    void parksAPoisonPurchaseAloneWithAConfirmAndStoresItsNeighbours() throws Exception {
        Purchase before = purchase(1);
        Purchase after = purchase(2);
        byte[] poison = "{\"purchaseId\":\"nope\"}".getBytes(StandardCharsets.UTF_8);

        listener.onMessage(batch(8, WireFormat.encode(before), poison, WireFormat.encode(after)), channel);

        assertThat(repository.stored).containsOnlyKeys(before.purchaseId(), after.purchaseId());
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(new String(parked.getValue(), StandardCharsets.UTF_8)).isEqualTo(new String(poison, StandardCharsets.UTF_8));
        verify(publishing).waitForConfirms(anyLong());
        verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());
        verify(channel).basicAck(8, true);
        verify(channel, never()).basicReject(anyLong(), anyBoolean());
        assertThat(registry.counter("purchases.poison", "kind", "purchase").count()).isEqualTo(1);
    }

    @Test
    void rejectsAWhollyUnreadableMessageWithoutRequeue() throws Exception {
        listener.onMessage(new Message("{\"version\":1,\"purchases\":".getBytes(), properties(7, PurchaseBatch.MESSAGE_TYPE)),
                channel);

        verify(channel).basicReject(7, false);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        assertThat(repository.attempts.get()).isZero();
        assertThat(registry.counter("purchases.poison", "kind", "message").count()).isEqualTo(1);
    }

    @Test
    void holdsTheMessageUnacknowledgedWhileTheStoreIsDownAndAcksAfterItReturns() throws Exception {
        repository.failuresBeforeRecovery.set(3);
        Purchase purchase = purchase(1);

        listener.onMessage(batch(1, WireFormat.encode(purchase)), channel);

        assertThat(repository.attempts.get()).isEqualTo(4);
        assertThat(repository.stored).containsKey(purchase.purchaseId());
        verify(channel).basicAck(1, true);
        assertThat(state.failure()).isNull();
        assertThat(registry.counter("purchases.write.failures", "fault", "store").count()).isEqualTo(3);
    }

    @Test
    void parksOnlyThePurchaseTheStoreRefusesForGood() throws Exception {
        Purchase refused = purchase(666);
        Purchase fine = purchase(2);
        repository.refusedStore = 666;

        listener.onMessage(batch(1, WireFormat.encode(refused), WireFormat.encode(fine)), channel);

        assertThat(repository.stored).containsOnlyKeys(fine.purchaseId());
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(WireFormat.decode(parked.getValue(), Purchase.class)).isEqualTo(refused);
        verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());
        verify(channel).basicAck(1, true);
    }

    @Test
    void aPurchaseFailingWithAnUnknownErrorIsParkedOnceItsNeighboursAreStored() throws Exception {
        Purchase bad = purchase(777);
        Purchase fine = purchase(2);
        Purchase alsoFine = purchase(3);
        repository.unknownForStore = 777;

        listener.onMessage(batch(1, WireFormat.encode(bad), WireFormat.encode(fine), WireFormat.encode(alsoFine)), channel);

        assertThat(repository.stored).containsOnlyKeys(fine.purchaseId(), alsoFine.purchaseId());
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(WireFormat.decode(parked.getValue(), Purchase.class)).isEqualTo(bad);
        verify(channel).basicAck(1, true);
        assertThat(registry.counter("purchases.write.failures", "fault", "unknown").count()).isPositive();
    }

    @Test
    void aBatchFailingAllAlikeWithAnUnknownErrorIsHeldNotParkedUntilTheStoreAcceptsIt() throws Exception {
        repository.unknownForAll = true;
        Purchase first = purchase(1);
        Purchase second = purchase(2);
        try (ExecutorService consumer = Executors.newSingleThreadExecutor()) {
            Future<?> held = consumer.submit(() -> {
                listener.onMessage(batch(1, WireFormat.encode(first), WireFormat.encode(second)), channel);
                return null;
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null && repository.attempts.get() > 10);
            assertThat(state.failure().fault()).isEqualTo(PurchaseRepository.Fault.UNKNOWN);
            verify(channel, never()).basicAck(anyLong(), anyBoolean());

            repository.unknownForAll = false;
            held.get();
        }
        assertThat(repository.stored).containsOnlyKeys(first.purchaseId(), second.purchaseId());
        verify(channel).basicAck(1, true);
        verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());
        assertThat(state.failure()).isNull();
    }

    @Test
    void aLonePurchaseFailingWithAnUnknownErrorIsParkedOnceAnotherConsumersWriteIsStored() throws Exception {
        Purchase bad = purchase(777);
        repository.unknownForStore = 777;
        try (ExecutorService consumer = Executors.newSingleThreadExecutor()) {
            Future<?> held = consumer.submit(() -> {
                listener.onMessage(batch(1, WireFormat.encode(bad)), channel);
                return null;
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null);
            verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());

            // Other tills' purchases keep arriving, as they do in service: one of them is a write
            // begun after a failure of the held purchase (the first may overlap the held attempt).
            for (long tag = 2; !held.isDone() && tag < 10_000; tag++) {
                listener.onMessage(batch(tag, WireFormat.encode(purchase(1))), channel);
            }
            held.get(10, TimeUnit.SECONDS);
        }
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(WireFormat.decode(parked.getValue(), Purchase.class)).isEqualTo(bad);
        verify(channel).basicAck(1, true);
        assertThat(state.failure()).isNull();
    }

    @Test
    void writesAPurchaseRepeatedInsideOneBatchOnce() throws Exception {
        Purchase purchase = purchase(1);

        listener.onMessage(batch(2, WireFormat.encode(purchase), WireFormat.encode(purchase)), channel);

        assertThat(repository.batches).containsExactly(1);
        verify(channel).basicAck(2, true);
        assertThat(registry.counter("purchases.duplicates").count()).isEqualTo(1);
    }

    @Test
    void requeuesAWaitingMessageWhenTheServiceStops() throws Exception {
        repository.failuresBeforeRecovery.set(Integer.MAX_VALUE);
        writer.stop();

        listener.onMessage(batch(4, WireFormat.encode(purchase(1)), WireFormat.encode(purchase(2))), channel);

        verify(channel).basicNack(4, false, true);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        assertThat(Thread.interrupted()).as("the interrupt is passed on").isTrue();
    }

    @Test
    void anUnexpectedErrorRequeuesTheMessageAfterABackoffAndParksItAfterTheLastAttempt() throws Exception {
        repository.unexpected = new IllegalStateException("a bug in the store");
        Message message = batch(9, WireFormat.encode(purchase(1)));

        listener.onMessage(message, channel);
        listener.onMessage(message, channel);
        verify(channel, times(2)).basicNack(9, false, true);
        verify(channel, never()).basicReject(anyLong(), anyBoolean());

        listener.onMessage(message, channel);
        verify(channel).basicReject(9, false);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        assertThat(registry.counter("purchases.errors").count()).isEqualTo(3);
    }

    @Test
    void oneConsumersSuccessDoesNotClearAnotherConsumersFailure() throws Exception {
        repository.downForStore = 13;
        try (ExecutorService consumers = Executors.newFixedThreadPool(1)) {
            Future<?> held = consumers.submit(() -> {
                listener.onMessage(batch(1, WireFormat.encode(purchase(13))), channel);
                return null;
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null);

            listener.onMessage(batch(2, WireFormat.encode(purchase(1))), channel);

            verify(channel).basicAck(2, true);
            assertThat(state.failure()).as("the other consumer's batch is still held").isNotNull();
            repository.downForStore = -1;
            held.get();
        }
        verify(channel).basicAck(1, true);
        assertThat(state.failure()).isNull();
    }

    private static Purchase purchase(int store) {
        return new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 1)), Instant.parse("2021-01-01T10:00:00Z"));
    }

    private static Message batch(long tag, byte[]... elements) {
        return new Message(PurchaseBatch.frame(List.of(elements)), properties(tag, PurchaseBatch.MESSAGE_TYPE));
    }

    private static MessageProperties properties(long tag, String type) {
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryTag(tag);
        properties.setType(type);
        properties.setConsumerQueue("sharding: purchaseX - n - 0");
        return properties;
    }

    /**
     * In-memory repository that can fail transiently a number of times or while a store is
     * "down", refuse one store for its data, fail for one store or for all with an error of no
     * known kind, or fail with an unexpected error.
     */
    private static final class FakeRepository implements PurchaseRepository {
        final Map<UUID, Purchase> stored = new ConcurrentHashMap<>();
        final List<Integer> batches = new ArrayList<>();
        final AtomicInteger failuresBeforeRecovery = new AtomicInteger();
        final AtomicInteger attempts = new AtomicInteger();
        volatile int refusedStore = -1;
        volatile int downForStore = -1;
        volatile int unknownForStore = -1;
        volatile boolean unknownForAll;
        volatile RuntimeException unexpected;

        @Override
        public synchronized StoreResult storeAll(List<Purchase> purchases) {
            attempts.incrementAndGet();
            if (failuresBeforeRecovery.getAndUpdate(n -> Math.max(0, n - 1)) > 0
                    || purchases.stream().anyMatch(p -> p.storeId() == downForStore)) {
                throw new DataAccessResourceFailureException("database down");
            }
            if (unexpected != null) {
                throw unexpected;
            }
            if (purchases.stream().anyMatch(p -> p.storeId() == refusedStore)) {
                throw new DataIntegrityViolationException("refused");
            }
            if (unknownForAll || purchases.stream().anyMatch(p -> p.storeId() == unknownForStore)) {
                throw new UnsupportedOperationException("an error of no known kind");
            }
            batches.add(purchases.size());
            int before = stored.size();
            purchases.forEach(p -> stored.putIfAbsent(p.purchaseId(), p));
            return new StoreResult(stored.size() - before, purchases.size() - (stored.size() - before));
        }

        @Override
        public long count() {
            return stored.size();
        }

        @Override
        public Optional<Purchase> findById(UUID purchaseId) {
            return Optional.ofNullable(stored.get(purchaseId));
        }

        @Override
        public void ping() {
        }

        @Override
        public Fault faultOf(RuntimeException failure) {
            return switch (failure) {
                case IllegalStateException bug -> throw bug; // a classification bug: the error escapes the writer
                case DataAccessResourceFailureException down -> Fault.STORE;
                case DataIntegrityViolationException data -> Fault.DATA;
                default -> Fault.UNKNOWN;
            };
        }
    }

    private static Channel publishingChannel() {
        Channel channel = mock(Channel.class);
        try {
            when(channel.waitForConfirms(anyLong())).thenReturn(true);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return channel;
    }

    /** Parking whose publishing connection hands out {@code publishing}. */
    private static Parking parkingOn(Channel publishing) {
        Connection connection = mock(Connection.class);
        when(connection.createChannel(false)).thenReturn(publishing);
        ConnectionFactory connections = mock(ConnectionFactory.class);
        when(connections.createConnection()).thenReturn(connection);
        return new Parking(connections);
    }
}
