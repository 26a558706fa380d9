package com.supermarket.store.counts;

import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.List;

/**
 * Bounded selection of the {@code k} largest entries: most first, ties by lower id. Kept as a
 * sorted insertion array rather than a heap because {@code k} is small (10 or 5 by default) and,
 * in a scan, almost every candidate is turned away by one comparison with {@link #threshold()};
 * the few that enter cost a binary search and one block move. No sort of the candidates ever
 * happens, and the result comes out already ordered.
 *
 * <p>Not thread-safe: one instance per query.
 */
final class TopK {

    private final int[] ids;
    private final long[] quantities;
    private int size;

    TopK(int k) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be at least 1: " + k);
        }
        ids = new int[k];
        quantities = new long[k];
    }

    /**
     * The quantity a candidate must exceed to enter: the smallest kept quantity once full,
     * otherwise 0 (only positive quantities are ranked). Exact when candidates are offered in
     * increasing id order, because then an equal quantity always loses its tie.
     */
    long threshold() {
        return size == ids.length ? quantities[size - 1] : 0;
    }

    /** Offers one candidate; non-positive quantities are ignored. Works in any id order. */
    void offer(int id, long quantity) {
        if (quantity <= 0) {
            return;
        }
        boolean full = size == ids.length;
        if (full && !ranksBefore(id, quantity, ids[size - 1], quantities[size - 1])) {
            return;
        }
        // Binary search for the first kept entry the candidate ranks before, then one block move:
        // cheap even for the largest limits (1,000).
        int low = 0;
        int high = size;
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (ranksBefore(id, quantity, ids[middle], quantities[middle])) {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        int moved = (full ? size - 1 : size) - low;
        System.arraycopy(ids, low, ids, low + 1, moved);
        System.arraycopy(quantities, low, quantities, low + 1, moved);
        ids[low] = id;
        quantities[low] = quantity;
        if (!full) {
            size++;
        }
    }

    List<Ranked> toList() {
        List<Ranked> ranking = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            ranking.add(new Ranked(ids[i], quantities[i]));
        }
        return List.copyOf(ranking);
    }

    private static boolean ranksBefore(int id, long quantity, int otherId, long otherQuantity) {
        return quantity > otherQuantity || (quantity == otherQuantity && id < otherId);
    }
}
