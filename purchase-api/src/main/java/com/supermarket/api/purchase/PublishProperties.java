package com.supermarket.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How purchases are published. Immutable.
 *
 * @param persistent     delivery mode 2 (survives a broker restart on durable queues) or
 *                       transient as in the original study
 * @param confirmTimeout how long a batch waits for the broker's confirm before every purchase in
 *                       it is answered {@code 503}
 * @param retryAfter     the {@code Retry-After} a refused request suggests
 * @param batch          the group commit
 */
@ConfigurationProperties("api.publish")
record PublishProperties(@DefaultValue("true") boolean persistent,
                         @DefaultValue("5s") Duration confirmTimeout,
                         @DefaultValue("1s") Duration retryAfter,
                         @DefaultValue Batch batch) {

    PublishProperties {
        if (confirmTimeout.isNegative() || confirmTimeout.isZero()) {
            throw new IllegalArgumentException("api.publish.confirm-timeout must be positive");
        }
    }

    /** The {@code Retry-After} header value: whole seconds, at least 1. */
    long retryAfterSeconds() {
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }

    /**
     * The group commit: one batch per store partition (each to the partition's next shard queue);
     * a partition's purchases wait while its previous batch awaits the broker's confirm, and then
     * linger for company while it keeps coming.
     *
     * <p>A purchase of an idle partition (nothing of it in flight or waiting; after a light batch,
     * of fewer purchases than {@code min-delay / delay-per-purchase}, nothing in flight for
     * min-delay) is published at once: a light load is answered in one confirm's time. The
     * purchases that come while the partition's batch is in flight, or less than min-delay after
     * a light batch's confirm, gather; after the confirm they leave once they have gathered
     * {@code delay-per-purchase} for each purchase they hold, at least {@code min-delay} and at most
     * {@code max-delay} (or at once when they fill {@code max-size}). So they keep gathering while
     * purchases come faster than one per {@code delay-per-purchase}: under a heavy load the
     * batches grow to max-size or max-delay, below it a batch leaves at most min-delay after its
     * first purchase once the confirm came. A message costs the broker, the consumers and Redis
     * far more than a purchase in it (docs/performance.md). {@code max-in-flight} bounds the
     * batches in flight over all partitions; below the partition count the partitions take turns
     * (oldest purchase first), making fewer, larger messages for a longer wait.
     *
     * @param maxSize          most purchases in one message; at most store-service's
     *                         {@code store.ingest.max-purchases-per-message}, which sizes its dedup window
     * @param minDelay         least a batch that began while its partition's previous one was in
     *                         flight, or less than this after a light batch's confirm, gathers
     * @param delayPerPurchase how long such a batch gathers per purchase it holds
     * @param maxDelay         most such a batch gathers; zero (with min-delay zero) sends each
     *                         batch as soon as the previous one's confirm came
     * @param maxInFlight      batches published and not yet confirmed, over all partitions;
     *                         each partition has one batch in flight and, under a load that
     *                         fills batches faster than the confirms come, full batches beyond
     * @param maxClaimsInFlight claims of {@code Idempotency-Key}s sent to the idempotency store
     *                         and not yet answered;
     *                         a claim holds no in-flight permit, so this bounds what a store that
     *                         does not answer holds. Keyed purchases that come while every slot is
     *                         taken gather into the next claim, and are answered {@code 503} once
     *                         they waited the store's timeout or a claim failed meanwhile. A claim
     *                         is one pipelined round trip (well under a millisecond on a LAN), so a
     *                         few are out at a time; the default leaves room for a slower link
     * @param queueCapacity    purchases waiting to be batched; beyond it a request is refused at
     *                         once
     * @param admissionTimeout how long a purchase may wait for its batch to be let in flight
     *                         (its partition's previous confirm, then a permit) before it is refused
     */
    record Batch(@DefaultValue("100") int maxSize,
                 @DefaultValue("4ms") Duration minDelay,
                 @DefaultValue("400us") Duration delayPerPurchase,
                 @DefaultValue("20ms") Duration maxDelay,
                 @DefaultValue("32") int maxInFlight,
                 @DefaultValue("2") int maxClaimsInFlight,
                 @DefaultValue("20000") int queueCapacity,
                 @DefaultValue("1s") Duration admissionTimeout) {

        Batch {
            if (maxSize < 1 || maxInFlight < 1 || maxClaimsInFlight < 1 || queueCapacity < 1) {
                throw new IllegalArgumentException("api.publish.batch max-size, max-in-flight,"
                        + " max-claims-in-flight and queue-capacity must be positive");
            }
            if (admissionTimeout.isNegative() || admissionTimeout.isZero()) {
                throw new IllegalArgumentException("api.publish.batch admission-timeout must be positive");
            }
            if (minDelay.isNegative() || delayPerPurchase.isNegative() || maxDelay.compareTo(minDelay) < 0) {
                throw new IllegalArgumentException("api.publish.batch min-delay and delay-per-purchase must not be negative,"
                        + " and max-delay not below min-delay");
            }
        }
    }
}
