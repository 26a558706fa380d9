package com.supermarket.purchases.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.WireFormat;
import com.supermarket.purchases.storage.PurchaseRepository;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.DataAccessResourceFailureException;

class PurchaseBatchListenerTest {

    private final FakeRepository repository = new FakeRepository();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StorageState state = new StorageState();
    private final BatchWriter writer = new BatchWriter(repository, state,
            new IngestProperties(1, 10, Duration.ofMillis(10), Duration.ofMillis(10), Duration.ofMillis(1), Duration.ofMillis(4)),
            registry);
    private final PurchaseBatchListener listener = new PurchaseBatchListener(writer, registry);
    private final Channel channel = mock(Channel.class);

    @Test
    void storesTheBatchThenAcknowledgesItWithOneMultipleAck() throws Exception {
        Purchase first = purchase(1);
        Purchase second = purchase(2);

        listener.onMessageBatch(List.of(message(5, first), message(6, second)), channel);

        assertThat(repository.stored).containsOnlyKeys(first.purchaseId(), second.purchaseId());
        verify(channel).basicAck(6, true);
        assertThat(registry.counter("purchases.stored").count()).isEqualTo(2);
    }

    @Test
    void rejectsAPoisonMessageWithoutRequeueAndStoresTheRestOfItsBatch() throws Exception {
        Purchase good = purchase(1);
        Message poison = new Message("{\"not\":\"a purchase\"}".getBytes(), properties(7));

        listener.onMessageBatch(List.of(poison, message(8, good)), channel);

        verify(channel).basicReject(7, false);
        verify(channel).basicAck(8, true);
        assertThat(repository.stored).containsOnlyKeys(good.purchaseId());
        assertThat(registry.counter("purchases.poison").count()).isEqualTo(1);
    }

    @Test
    void holdsTheBatchUnacknowledgedWhileTheStoreIsDownAndAcksAfterItReturns() throws Exception {
        repository.failuresBeforeRecovery.set(3);
        Purchase purchase = purchase(1);

        listener.onMessageBatch(List.of(message(1, purchase)), channel);

        assertThat(repository.attempts.get()).isEqualTo(4);
        assertThat(repository.stored).containsKey(purchase.purchaseId());
        verify(channel).basicAck(1, true);
        assertThat(state.failure()).isNull();
        assertThat(registry.counter("purchases.write.failures").count()).isEqualTo(3);
    }

    @Test
    void rejectsOnlyThePurchaseTheStoreRefusesForGood() throws Exception {
        Purchase refused = purchase(666);
        Purchase fine = purchase(2);
        repository.refusedStore = 666;

        listener.onMessageBatch(List.of(message(1, refused), message(2, fine)), channel);

        verify(channel).basicReject(1, false);
        verify(channel).basicAck(2, true);
        assertThat(repository.stored).containsOnlyKeys(fine.purchaseId());
    }

    @Test
    void countsARedeliveryInTheSameBatchAsADuplicateAndWritesItOnce() throws Exception {
        Purchase purchase = purchase(1);

        listener.onMessageBatch(List.of(message(1, purchase), message(2, purchase)), channel);

        assertThat(repository.batches).containsExactly(1);
        verify(channel).basicAck(2, true);
        assertThat(registry.counter("purchases.duplicates").count()).isEqualTo(1);
    }

    @Test
    void requeuesAWaitingBatchWhenTheServiceStops() throws Exception {
        repository.failuresBeforeRecovery.set(Integer.MAX_VALUE);
        writer.stop();

        listener.onMessageBatch(List.of(message(3, purchase(1)), message(4, purchase(2))), channel);

        verify(channel).basicNack(4, true, true);
        verify(channel, never()).basicAck(anyLong(), eq(true));
        Thread.interrupted();
    }

    private static Purchase purchase(int store) {
        return new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 1)), Instant.parse("2021-01-01T10:00:00Z"));
    }

    private static Message message(long tag, Purchase purchase) {
        return new Message(WireFormat.encode(purchase), properties(tag));
    }

    private static MessageProperties properties(long tag) {
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryTag(tag);
        return properties;
    }

    /** In-memory repository that can fail transiently a number of times, or refuse one store for good. */
    private static final class FakeRepository implements PurchaseRepository {
        final Map<UUID, Purchase> stored = new HashMap<>();
        final List<Integer> batches = new ArrayList<>();
        final AtomicInteger failuresBeforeRecovery = new AtomicInteger();
        final AtomicInteger attempts = new AtomicInteger();
        int refusedStore = -1;

        @Override
        public StoreResult storeAll(List<Purchase> purchases) {
            attempts.incrementAndGet();
            if (failuresBeforeRecovery.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new DataAccessResourceFailureException("database down");
            }
            if (purchases.stream().anyMatch(p -> p.storeId() == refusedStore)) {
                throw new DataIntegrityViolationException("refused");
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
        public boolean isTransient(RuntimeException failure) {
            return failure instanceof DataAccessResourceFailureException;
        }
    }
}
