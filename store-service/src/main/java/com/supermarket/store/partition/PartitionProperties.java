package com.supermarket.store.partition;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Which store partition this instance is ({@code store.partition}); how many there are is the
 * shared {@code platform.broker.store-partitions} ({@code STORE_PARTITIONS}). Immutable.
 *
 * @param index this instance's partition ({@code STORE_PARTITION}); when unset, the ordinal at
 *              the end of the host name if it ends in {@code -<n>} (a StatefulSet's pod
 *              {@code store-service-1} is partition 1), else 0
 */
@ConfigurationProperties("store.partition")
record PartitionProperties(Integer index) {
}
