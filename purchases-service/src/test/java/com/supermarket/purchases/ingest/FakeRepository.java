package com.supermarket.purchases.ingest;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;

/**
 * In-memory repository that can fail transiently a number of times or while a store is
 * "down", refuse one store for its data, fail for one store or for all with an error of no
 * known kind, or fail with an unexpected error.
 */
final class FakeRepository implements PurchaseRepository {
    final Map<UUID, Purchase> stored = new ConcurrentHashMap<>();
    /** The size of each write the store took, in order. */
    final List<Integer> batches = new CopyOnWriteArrayList<>();
    final AtomicInteger failuresBeforeRecovery = new AtomicInteger();
    final AtomicInteger attempts = new AtomicInteger();
    volatile int refusedStore = -1;
    volatile int downForStore = -1;
    volatile int unknownForStore = -1;
    volatile boolean unknownForAll;
    volatile RuntimeException unexpected;

    /** A new purchase of {@code store} (the store decides how the fakes treat it). */
    static Purchase purchaseAt(int store) {
        return new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 1)), Instant.parse("2021-01-01T10:00:00Z"));
    }

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
