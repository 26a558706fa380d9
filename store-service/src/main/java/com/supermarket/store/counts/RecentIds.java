package com.supermarket.store.counts;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The last {@code capacity} purchase ids seen, for deduplication, each with the second it was
 * recorded: a ring buffer of the ids (two {@code long}s and an {@code int} each) indexed by an
 * open-addressing hash table of ring slots (linear probing, deletion by backward shift, so no
 * tombstones pile up). 28 bytes per id (20 in the ring, two 4-byte table slots, the table being
 * kept at most half full), against roughly 80 for a {@code HashSet<UUID>} plus a queue, with no
 * garbage per id. The recording times let the caller tell whether an id was forgotten sooner
 * than it promised to remember it ({@link #forgottenAt()}).
 *
 * <p>Not thread-safe: {@link StoreCounts} guards each instance with its store's lock.
 */
final class RecentIds {

    private static final int EMPTY = 0;
    /** {@link #forgottenAt()} when the last {@link #add} forgot nothing. */
    static final int NOTHING_FORGOTTEN = Integer.MIN_VALUE;

    private final long[] mostSignificant;
    private final long[] leastSignificant;
    /** When each ring slot's id was recorded, in the caller's seconds. */
    private final int[] recordedAt;
    /** Holds ring slot + 1, or {@link #EMPTY}. */
    private final int[] table;
    private final int mask;
    private int next;
    private int size;
    private int forgottenAt = NOTHING_FORGOTTEN;

    RecentIds(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        mostSignificant = new long[capacity];
        leastSignificant = new long[capacity];
        recordedAt = new int[capacity];
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
     * Records {@code id} as seen at second {@code now}, forgetting the oldest one if full.
     *
     * @return false if {@code id} was already among the recent ids (nothing changes then)
     */
    boolean add(UUID id, int now) {
        long msb = id.getMostSignificantBits();
        long lsb = id.getLeastSignificantBits();
        forgottenAt = NOTHING_FORGOTTEN;
        if (find(msb, lsb) >= 0) {
            return false;
        }
        if (size == capacity()) {
            removeFromTable(next);
            forgottenAt = recordedAt[next];
        } else {
            size++;
        }
        mostSignificant[next] = msb;
        leastSignificant[next] = lsb;
        recordedAt[next] = now;
        int position = home(msb, lsb);
        while (table[position] != EMPTY) {
            position = (position + 1) & mask;
        }
        table[position] = next + 1;
        next = next + 1 == capacity() ? 0 : next + 1;
        return true;
    }

    /**
     * When the id that the last {@link #add} forgot to make room had been recorded (the caller's
     * seconds), or {@link #NOTHING_FORGOTTEN}.
     */
    int forgottenAt() {
        return forgottenAt;
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
