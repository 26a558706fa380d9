package com.supermarket.purchases.ingest;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the {@code purchaseX} shard queues are consumed and how failed writes are retried (the
 * discovery and retry intervals of the broker are the shared {@code platform.broker.*}).
 *
 * @param consumersPerShard   consumers on each shard queue; each decodes its messages and hands
 *                            them to the one writer, which stores them in groups
 * @param prefetch            unacknowledged messages each consumer may hold (waiting for their
 *                            group's write included)
 * @param groupDelay          the longest a message waits for others to share its write (one
 *                            transaction for the group); a message arriving while the previous
 *                            write takes longer is written at once after it
 * @param groupMessages       write at once when this many messages wait
 * @param retryInitialBackoff first wait after a failed write; doubled per failure (with jitter)
 * @param retryMaxBackoff     cap of that wait
 * @param maxAttemptsOnError  deliveries of one message that fails with an unexpected error (not
 *                            the store being down) before it is rejected to the parking queue;
 *                            each is requeued after the backoff above
 */
@ConfigurationProperties("purchases.ingest")
public record IngestProperties(
        @DefaultValue("1") int consumersPerShard,
        @DefaultValue("10") int prefetch,
        @DefaultValue("20ms") Duration groupDelay,
        @DefaultValue("40") int groupMessages,
        @DefaultValue("200ms") Duration retryInitialBackoff,
        @DefaultValue("10s") Duration retryMaxBackoff,
        @DefaultValue("5") int maxAttemptsOnError) {

    public IngestProperties {
        if (consumersPerShard < 1 || prefetch < 1 || groupMessages < 1 || maxAttemptsOnError < 1) {
            throw new IllegalArgumentException("purchases.ingest.consumers-per-shard, .prefetch, .group-messages "
                    + "and .max-attempts-on-error must be at least 1");
        }
        if (groupDelay == null || groupDelay.isNegative()) {
            throw new IllegalArgumentException("purchases.ingest.group-delay must not be negative");
        }
    }

    /** Concurrent writers per broker node: consumers on each of its {@code shardsPerNode} shards. */
    public int writersPerNode(int shardsPerNode) {
        return consumersPerShard * shardsPerNode;
    }
}
