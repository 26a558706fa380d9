package com.supermarket.store.durability;

import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the durable counts ({@code store.durability}).
 *
 * @param enabled          write-ahead log and snapshots; false acknowledges each message as soon as
 *                         it is counted in memory (counts are then lost on restart: for measuring
 *                         the cost only)
 * @param stateDir         directory of the log segments and snapshots (a volume of its own in a
 *                         deployment); created if missing
 * @param groupDelay       the longest a counted message waits for others to share its fsync
 * @param groupMessages    fsync at once when this many messages wait
 * @param snapshotLogSize  take a snapshot when the current log segment has grown this large
 *                         (bounds the replay at startup)
 * @param snapshotInterval take a snapshot this long after the last one if anything was logged since
 */
@ConfigurationProperties("store.durability")
record DurabilityProperties(boolean enabled, Path stateDir, Duration groupDelay, int groupMessages,
                            DataSize snapshotLogSize, Duration snapshotInterval) {

    DurabilityProperties {
        if (enabled && stateDir == null) {
            throw new IllegalArgumentException("store.durability.state-dir must be set (STORE_DURABILITY_STATE_DIR)");
        }
        if (groupDelay == null || groupDelay.isNegative()) {
            throw new IllegalArgumentException("store.durability.group-delay must not be negative");
        }
        if (groupMessages < 1) {
            throw new IllegalArgumentException("store.durability.group-messages must be positive");
        }
        if (snapshotLogSize == null || snapshotLogSize.toBytes() < 1) {
            throw new IllegalArgumentException("store.durability.snapshot-log-size must be positive");
        }
        if (snapshotInterval == null || !snapshotInterval.isPositive()) {
            throw new IllegalArgumentException("store.durability.snapshot-interval must be positive");
        }
    }
}
