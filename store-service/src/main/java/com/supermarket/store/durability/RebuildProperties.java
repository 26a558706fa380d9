package com.supermarket.store.durability;

import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Where a copy whose state directory is empty gets its counts from ({@code store.rebuild}), when
 * the partition has more than one copy ({@code STORE_COPIES}). Immutable.
 *
 * @param peers   base URLs of the other copies of this partition (comma
 *                separated), their server port; {@value #PARTITION} in a URL is replaced by this
 *                instance's partition, so every partition can be given the same list
 * @param timeout how long a peer may take to start answering a snapshot request
 */
@ConfigurationProperties("store.rebuild")
record RebuildProperties(@DefaultValue List<String> peers, @DefaultValue("30s") Duration timeout) {

    /** The placeholder replaced by this instance's partition in a peer's URL. */
    static final String PARTITION = "{partition}";

    RebuildProperties {
        peers = peers.stream().map(String::strip).filter(peer -> !peer.isEmpty()).toList();
    }

    /** The peers' URLs for {@code partition}. */
    List<String> peersOf(int partition) {
        return peers.stream().map(peer -> peer.replace(PARTITION, Integer.toString(partition))).toList();
    }
}
