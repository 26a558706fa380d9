package com.supermarket.store.counts;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The last {@code capacity} purchase ids seen, for deduplication: a ring buffer of the ids (two
 * {@code long}s each) indexed by an open-addressing hash table of ring slots (linear probing,
 * deletion by backward shift, so no tombstones pile up). About {@code 16 + 2 * 4 * 2 = 32} bytes
 * per id, against roughly 80 for a {@code HashSet<UUID>} plus a queue, with no garbage per id.
 *
 * <p>Not thread-safe: {@link StoreCounts} guards each instance with its store's lock.
 */
final class RecentIds {

    private static final int EMPTY = 0;

    private final long[] mostSignificant;
    private final long[] leastSignificant;
    /** Holds ring slot + 1, or {@link #EMPTY}. */
    private final int[] table;
    private final int mask;
    private int next;
    private int size;

    RecentIds(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        mostSignificant = new long[capacity];
        leastSignificant = new long[capacity];
        // At most half full, so probe sequences stay short.
        table = new int[Integer.highestOneBit(Math.max(1, capacity * 2 - 1)) << 1];
        mask = table.length - 1;
    }

    int capacity() {
        return mostSignificant.length;
    }

    int size() {
        return size;
    }

    boolean contains(UUID id) {
        return find(id.getMostSignificantBits(), id.getLeastSignificantBits()) >= 0;
    }

    /**
     * Records {@code id}, forgetting the oldest one if full.
     *
     * @return false if {@code id} was already among the recent ids (nothing changes then)
     */
    boolean add(UUID id) {
        long msb = id.getMostSignificantBits();
        long lsb = id.getLeastSignificantBits();
        if (find(msb, lsb) >= 0) {
            return false;
        }
        if (size == capacity()) {
            removeFromTable(next);
        } else {
            size++;
        }
        mostSignificant[next] = msb;
        leastSignificant[next] = lsb;
        int position = home(msb, lsb);
        while (table[position] != EMPTY) {
            position = (position + 1) & mask;
        }
        table[position] = next + 1;
        next = next + 1 == capacity() ? 0 : next + 1;
        return true;
    }

    /** The recent ids, oldest first (for a snapshot). */
    List<UUID> oldestFirst() {
        List<UUID> ids = new ArrayList<>(size);
        int start = size == capacity() ? next : 0;
        for (int i = 0; i < size; i++) {
            int slot = (start + i) % capacity();
            ids.add(new UUID(mostSignificant[slot], leastSignificant[slot]));
        }
        return ids;
    }

    /** The table position holding the id, or -1. */
    private int find(long msb, long lsb) {
        for (int position = home(msb, lsb); table[position] != EMPTY; position = (position + 1) & mask) {
            int slot = table[position] - 1;
            if (mostSignificant[slot] == msb && leastSignificant[slot] == lsb) {
                return position;
            }
        }
        return -1;
    }

    private void removeFromTable(int slot) {
        int hole = find(mostSignificant[slot], leastSignificant[slot]);
        table[hole] = EMPTY;
        // Backward shift: move later entries of the probe run into the hole unless their home
        // lies cyclically in (hole, position], where they must stay to remain findable.
        for (int position = (hole + 1) & mask; table[position] != EMPTY; position = (position + 1) & mask) {
            int moved = table[position] - 1;
            int home = home(mostSignificant[moved], leastSignificant[moved]);
            boolean stays = hole <= position ? hole < home && home <= position : hole < home || home <= position;
            if (!stays) {
                table[hole] = table[position];
                table[position] = EMPTY;
                hole = position;
            }
        }
    }

    private int home(long msb, long lsb) {
        long hash = (msb ^ Long.rotateLeft(lsb, 32)) * 0x9E3779B97F4A7C15L;
        return (int) (hash >>> 32) & mask;
    }
}
