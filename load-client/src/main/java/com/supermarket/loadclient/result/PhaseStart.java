package com.supermarket.loadclient.result;

/**
 * When one of the staggered time-zone phases started. Immutable.
 *
 * @param name       {@code east}, {@code central} or {@code west}
 * @param firstStore first store id of the phase (inclusive)
 * @param lastStore  last store id of the phase (inclusive); below {@code firstStore} when empty
 * @param atSeconds  seconds since the run started, or -1 if the phase never started
 */
public record PhaseStart(String name, int firstStore, int lastStore, double atSeconds) {
}
