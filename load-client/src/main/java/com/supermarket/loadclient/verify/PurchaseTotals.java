package com.supermarket.loadclient.verify;

import com.supermarket.contract.CountsDigest;
import com.supermarket.contract.StorePartition;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The brute-force truth the GETs are checked against: the quantity of every item sold at every
 * store, and the purchases of every store, summed over purchases-service's database
 * ({@link #read}), and what store-service must answer from them: the top items of a store, the
 * top stores of an item, the chain's top items (most first, ties by the lower id, only positive
 * quantities: store-service's {@code TopK} and purchase-api's merges of partitions) and each
 * partition's state summary ({@link #summary}). Not thread-safe: filled once, then read.
 */
final class PurchaseTotals {

    /** One ranked entry of an answer: an item (of a store) or a store (of an item) and its quantity. */
    record Ranked(int id, long quantity) {
    }

    /** What {@code GET /state/summary} of a partition's copy must say (store-service's {@code CountsSummary}). */
    record Summary(long purchases, long quantity, String digest) {
    }

    /** Most first, ties by the lower id: the order both GETs answer in. */
    static final Comparator<Ranked> MOST_FIRST = Comparator.comparingLong(Ranked::quantity).reversed()
            .thenComparingInt(Ranked::id);

    /**
     * Every item line of the purchases accepted since a moment, summed per store and item.
     * purchases-service keeps a purchase's lines as {@code [[itemId, quantity], ...]} in the JSON
     * column {@code items} of its row (its migrations V1 to V3); JSON_TABLE (MariaDB 10.6+, MySQL 8)
     * turns them into rows. A full scan, as a brute-force check should be.
     */
    static final String LINES_SQL = "SELECT p.store_id, j.item_id, SUM(j.quantity) FROM purchase p, "
            + "JSON_TABLE(p.items, '$[*]' COLUMNS (item_id INT PATH '$[0]', quantity INT PATH '$[1]')) AS j "
            + "WHERE p.accepted_at_us >= ? GROUP BY p.store_id, j.item_id";

    /** The purchases of every store accepted since a moment. */
    static final String PURCHASES_SQL = "SELECT store_id, COUNT(*) FROM purchase WHERE accepted_at_us >= ? GROUP BY store_id";

    private final Map<Integer, Map<Integer, Long>> itemsByStore = new HashMap<>();
    private final Map<Integer, Map<Integer, Long>> storesByItem = new HashMap<>();
    private final Map<Integer, Long> purchasesByStore = new HashMap<>();
    private long lines;

    /**
     * The totals of the purchases accepted at or after {@code sinceMicros} (epoch microseconds,
     * purchases-service's {@code accepted_at_us}; 0 for all).
     */
    static PurchaseTotals read(Connection connection, long sinceMicros) throws SQLException {
        PurchaseTotals totals = new PurchaseTotals();
        try (PreparedStatement statement = connection.prepareStatement(LINES_SQL)) {
            statement.setLong(1, sinceMicros);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    totals.addSold(rows.getInt(1), rows.getInt(2), rows.getLong(3));
                }
            }
        }
        try (PreparedStatement statement = connection.prepareStatement(PURCHASES_SQL)) {
            statement.setLong(1, sinceMicros);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    totals.addPurchases(rows.getInt(1), rows.getLong(2));
                }
            }
        }
        return totals;
    }

    /** Adds {@code quantity} of {@code itemId} sold at {@code storeId}. */
    void addSold(int storeId, int itemId, long quantity) {
        itemsByStore.computeIfAbsent(storeId, s -> new HashMap<>()).merge(itemId, quantity, Long::sum);
        storesByItem.computeIfAbsent(itemId, i -> new HashMap<>()).merge(storeId, quantity, Long::sum);
        lines++;
    }

    /** Adds {@code purchases} purchases of {@code storeId}. */
    void addPurchases(int storeId, long purchases) {
        purchasesByStore.merge(storeId, purchases, Long::sum);
    }

    /** The stores with sales, in increasing order. */
    TreeSet<Integer> stores() {
        return new TreeSet<>(itemsByStore.keySet());
    }

    /** The items sold somewhere, in increasing order. */
    TreeSet<Integer> items() {
        return new TreeSet<>(storesByItem.keySet());
    }

    /** Purchases in the totals. */
    long purchases() {
        return purchasesByStore.values().stream().mapToLong(Long::longValue).sum();
    }

    /** (store, item) pairs with sales. */
    long storeItemPairs() {
        return lines;
    }

    /** What was sold of {@code itemId} at {@code storeId}. */
    long sold(int storeId, int itemId) {
        return itemsByStore.getOrDefault(storeId, Map.of()).getOrDefault(itemId, 0L);
    }

    /** The {@code limit} items sold most at {@code storeId}, as {@code GET /items/store/{id}} must answer. */
    List<Ranked> topItemsAt(int storeId, int limit) {
        return top(itemsByStore.getOrDefault(storeId, Map.of()), limit);
    }

    /** The {@code limit} stores that sold {@code itemId} most, as {@code GET /items/top10/{id}} must answer. */
    List<Ranked> topStoresFor(int itemId, int limit) {
        return top(storesByItem.getOrDefault(itemId, Map.of()), limit);
    }

    private static List<Ranked> top(Map<Integer, Long> quantities, int limit) {
        List<Ranked> all = new ArrayList<>(quantities.size());
        quantities.forEach((id, quantity) -> {
            if (quantity > 0) {
                all.add(new Ranked(id, quantity));
            }
        });
        all.sort(MOST_FIRST);
        return List.copyOf(all.subList(0, Math.min(limit, all.size())));
    }

    /** What was sold of {@code itemId} over every store. */
    long soldOverall(int itemId) {
        return storesByItem.getOrDefault(itemId, Map.of()).values().stream().mapToLong(Long::longValue).sum();
    }

    /** The {@code limit} items sold most over every store, as {@code GET /items/top} must answer. */
    List<Ranked> topItems(int limit) {
        Map<Integer, Long> overall = new HashMap<>();
        storesByItem.forEach((item, stores) -> overall.put(item, soldOverall(item)));
        return top(overall, limit);
    }

    /**
     * What {@code GET /state/summary} of every copy of {@code partition} (of {@code partitions})
     * must say: the purchases and quantities of the stores s with s mod partitions = partition,
     * and the fingerprint of their (store, item, count) triples.
     */
    Summary summary(int partition, int partitions) {
        long purchases = 0;
        long quantity = 0;
        CountsDigest digest = new CountsDigest();
        for (Map.Entry<Integer, Long> store : purchasesByStore.entrySet()) {
            if (StorePartition.ownerOf(store.getKey(), partitions) == partition) {
                purchases += store.getValue();
            }
        }
        for (Map.Entry<Integer, Map<Integer, Long>> store : itemsByStore.entrySet()) {
            if (StorePartition.ownerOf(store.getKey(), partitions) != partition) {
                continue;
            }
            for (Map.Entry<Integer, Long> item : store.getValue().entrySet()) {
                quantity += item.getValue();
                digest.add(store.getKey(), item.getKey(), Math.toIntExact(item.getValue()));
            }
        }
        return new Summary(purchases, quantity, digest.hex());
    }
}
