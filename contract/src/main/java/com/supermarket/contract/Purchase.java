package com.supermarket.contract;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One accepted purchase, as it travels on the broker from purchase-api to the consuming
 * services. Immutable and therefore safe to share between threads.
 *
 * @param purchaseId unique id assigned by purchase-api; consumers deduplicate on it
 * @param storeId    the store, 1..maxStores; also the routing key, so one store stays on one shard
 * @param customerId the customer
 * @param date       the purchase date (the {@code yyyyMMdd} path segment of the API)
 * @param items      at least one item line
 * @param acceptedAt when purchase-api accepted the request, for end-to-end latency
 */
public record Purchase(UUID purchaseId, int storeId, int customerId, LocalDate date,
                       List<PurchaseItem> items, Instant acceptedAt) {

    public Purchase {
        Objects.requireNonNull(purchaseId, "purchaseId");
        Objects.requireNonNull(date, "date");
        Objects.requireNonNull(acceptedAt, "acceptedAt");
        items = List.copyOf(Objects.requireNonNull(items, "items"));
        if (storeId < 1) {
            throw new IllegalArgumentException("storeId must be positive: " + storeId);
        }
        if (items.isEmpty()) {
            throw new IllegalArgumentException("a purchase has at least one item");
        }
    }

    /** The routing key both sharded exchanges hash: the store id in decimal. */
    public String routingKey() {
        return Integer.toString(storeId);
    }
}
