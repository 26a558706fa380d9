package com.supermarket.loadclient.run;

import java.util.List;

/**
 * One of the staggered time-zone phases of the standard load profile: a contiguous range of
 * stores that starts when any store has sent {@code triggerHours} hours of purchases. Immutable.
 */
record Phase(String name, int firstStore, int lastStore, int triggerHours) {

    static final int HOURS_OPEN = 9;
    static final int CENTRAL_TRIGGER_HOURS = 3;
    static final int WEST_TRIGGER_HOURS = 5;

    int size() {
        return Math.max(0, lastStore - firstStore + 1);
    }

    boolean contains(int store) {
        return store >= firstStore && store <= lastStore;
    }

    /**
     * East gets a quarter of the stores, central a quarter, west the remaining half, as in the
     * standard client. East gets at least one store so that tiny runs still have a clock.
     */
    static List<Phase> split(int maxStores) {
        int east = Math.max(1, maxStores / 4);
        int central = Math.min(maxStores - east, maxStores / 4);
        int west = maxStores - east - central;
        return List.of(
                new Phase("east", 1, east, 0),
                new Phase("central", east + 1, east + central, CENTRAL_TRIGGER_HOURS),
                new Phase("west", east + central + 1, east + central + west, WEST_TRIGGER_HOURS));
    }
}
