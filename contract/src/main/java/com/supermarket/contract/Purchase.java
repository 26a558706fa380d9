package com.supermarket.contract;

import com.fasterxml.jackson.annotation.JsonInclude;
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
 * @param storeId    the store, 1..maxStores; its store partition's shard queues carry it
 *                   ({@link Topology#routingKey(int, int, long, int)})
 * @param customerId the customer
 * @param date       the purchase date (the {@code yyyyMMdd} path segment of the API)
 * @param items      at least one item line
 * @param acceptedAt when purchase-api accepted the request, for end-to-end latency
 * @param traceparent the W3C {@code traceparent} of the request that accepted it, so each
 *                   consumer can link its work to that trace; null when purchase-api traced
 *                   nothing (tracing off, or a message from before the field). Not one of the
 *                   purchase's facts: a value that is not a well-formed version-00 traceparent is
 *                   dropped (null), never a reason to refuse the purchase.
 */
public record Purchase(UUID purchaseId, int storeId, int customerId, LocalDate date,
                       List<PurchaseItem> items, Instant acceptedAt,
                       @JsonInclude(JsonInclude.Include.NON_NULL) String traceparent) {

    /** The length of a version-00 traceparent: {@code 00-<32 hex>-<16 hex>-<2 hex>}. */
    public static final int TRACEPARENT_LENGTH = 55;

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
        if (traceparent != null && !isTraceparent(traceparent)) {
            traceparent = null;
        }
    }

    /** An untraced purchase. */
    public Purchase(UUID purchaseId, int storeId, int customerId, LocalDate date, List<PurchaseItem> items,
                    Instant acceptedAt) {
        this(purchaseId, storeId, customerId, date, items, acceptedAt, null);
    }

    /** This purchase carrying {@code traceparent} (null: untraced). */
    public Purchase withTraceparent(String traceparent) {
        return new Purchase(purchaseId, storeId, customerId, date, items, acceptedAt, traceparent);
    }

    /**
     * Whether {@code value} is a version-00 W3C traceparent in lower-case hex: only such a value
     * travels, so it never needs escaping in JSON.
     */
    static boolean isTraceparent(String value) {
        if (value.length() != TRACEPARENT_LENGTH || !value.startsWith("00-") || value.charAt(35) != '-'
                || value.charAt(52) != '-') {
            return false;
        }
        for (int i = 3; i < TRACEPARENT_LENGTH; i++) {
            char c = value.charAt(i);
            if (i != 35 && i != 52 && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }
}
