package com.supermarket.store.counts;

import com.supermarket.contract.StoreQueryReply.Ranked;
import java.util.ArrayList;
import java.util.List;

/**
 * Bounded selection of the {@code k} largest entries: most first, ties by lower id. Kept as a
 * small sorted insertion array rather than a heap because {@code k} is small (10 or 5) and, in a
 * scan, almost every candidate is turned away by one comparison with {@link #threshold()}; no
 * full sort of the candidates ever happens.
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
        int last = size - 1;
        if (size == ids.length && !ranksBefore(id, quantity, ids[last], quantities[last])) {
            return;
        }
        int position = size == ids.length ? last : size;
        while (position > 0 && ranksBefore(id, quantity, ids[position - 1], quantities[position - 1])) {
            ids[position] = ids[position - 1];
            quantities[position] = quantities[position - 1];
            position--;
        }
        ids[position] = id;
        quantities[position] = quantity;
        if (size < ids.length) {
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
