package com.supermarket.store.partition;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Which store partition, and which copy of it, this instance is ({@code store.partition}); how
 * many there are is the shared {@code platform.broker.store-partitions} ({@code STORE_PARTITIONS})
 * and {@code platform.broker.store-copies} ({@code STORE_COPIES}). Immutable.
 *
 * @param index this instance's partition; when unset, the ordinal at
 *              the end of the host name if it ends in {@code -<n>} (a StatefulSet's pod
 *              {@code store-service-1} is partition 1), else 0
 * @param copy  this instance's copy of its partition, 0..copies-1; 0 when unset
 */
@ConfigurationProperties("store.partition")
record PartitionProperties(Integer index, Integer copy) {
}
