package com.supermarket.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How purchases are published. Immutable.
 *
 * @param persistent     delivery mode 2 (survives a broker restart on durable queues) or
 *                       transient as in the original study ({@code PUBLISH_PERSISTENT})
 * @param confirmTimeout how long a batch waits for the broker's confirm before every purchase in
 *                       it is answered {@code 503} ({@code PUBLISH_CONFIRM_TIMEOUT})
 * @param retryAfter     the {@code Retry-After} a refused request suggests ({@code PUBLISH_RETRY_AFTER})
 * @param batch          the group commit
 */
@ConfigurationProperties("platform.publish")
record PublishProperties(@DefaultValue("true") boolean persistent,
                         @DefaultValue("5s") Duration confirmTimeout,
                         @DefaultValue("1s") Duration retryAfter,
                         @DefaultValue Batch batch) {

    PublishProperties {
        if (confirmTimeout.isNegative() || confirmTimeout.isZero()) {
            throw new IllegalArgumentException("platform.publish.confirm-timeout must be positive");
        }
    }

    /** The {@code Retry-After} header value: whole seconds, at least 1. */
    long retryAfterSeconds() {
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }

    /**
     * The group commit: purchases that gather while earlier batches await their confirms are
     * published together, one message and one confirm per routing bucket.
     *
     * <p>The defaults (20 ms, 2 buckets, 2 in flight) bound the messages to a few hundred per
     * second whatever the load, because a message costs the broker and the consumers far more
     * than a purchase in it: with 8 buckets, 4 in flight and 1 ms, a fast broker let the
     * publisher send about 1,000 messages/s of 5 purchases at 5,000 purchases/s, and the
     * broker spent 0.19 ms of CPU per purchase instead of 0.10; at a paced 3,000/s, 12 ms
     * instead of 4 cut the CPU per purchase by a quarter; at a paced 5,500/s with GETs, 20 ms
     * instead of 12 cut the broker's by a fifth and the whole stack's by an eighth, for ~4 ms
     * more at the POSTs' median (docs/performance.md). The 2 ms gap keeps a closed loop of
     * few clients, who all wait for their answers, from being held for the cap each round.
     *
     * @param maxSize          most purchases in one message ({@code PUBLISH_BATCH_MAX_SIZE})
     * @param maxDelay         how long a purchase may wait for its batch to fill while other
     *                         batches are in flight ({@code PUBLISH_BATCH_MAX_DELAY}); an idle
     *                         publisher never waits; zero publishes whatever has gathered
     * @param maxGap           within max-delay, how long the batch waits for the next purchase:
     *                         once none comes for this long it leaves ({@code PUBLISH_BATCH_MAX_GAP}),
     *                         so a few clients that all wait for their answers are not held
     *                         for max-delay each time; at max-delay or longer it never cuts the wait
     * @param buckets          routing buckets: one batch holds stores of one bucket, so
     *                         {@code x-modulus-hash} keeps each store on one shard
     *                         ({@code PUBLISH_BATCH_BUCKETS}); more buckets spread better over
     *                         shards, fewer make larger batches
     * @param maxInFlight      batches published and not yet confirmed ({@code PUBLISH_MAX_IN_FLIGHT})
     * @param maxClaimsInFlight claims of {@code Idempotency-Key}s sent to the idempotency store
     *                         and not yet answered ({@code PUBLISH_MAX_CLAIMS_IN_FLIGHT});
     *                         a claim holds no in-flight permit, so this bounds what a store that
     *                         does not answer holds. Keyed purchases that come while every slot is
     *                         taken gather into the next claim, and are answered {@code 503} once
     *                         they waited the store's timeout or a claim failed meanwhile. A claim
     *                         is one pipelined round trip (well under a millisecond on a LAN), so a
     *                         few are out at a time; the default leaves room for a slower link
     * @param queueCapacity    purchases waiting to be batched; beyond it a request is refused at
     *                         once ({@code PUBLISH_QUEUE_CAPACITY})
     * @param admissionTimeout how long a purchase may wait for its batch to be let in flight
     *                         before it is refused ({@code PUBLISH_ADMISSION_TIMEOUT})
     */
    record Batch(@DefaultValue("100") int maxSize,
                 @DefaultValue("20ms") Duration maxDelay,
                 @DefaultValue("2ms") Duration maxGap,
                 @DefaultValue("2") int buckets,
                 @DefaultValue("2") int maxInFlight,
                 @DefaultValue("2") int maxClaimsInFlight,
                 @DefaultValue("20000") int queueCapacity,
                 @DefaultValue("1s") Duration admissionTimeout) {

        Batch {
            if (maxSize < 1 || buckets < 1 || maxInFlight < 1 || maxClaimsInFlight < 1 || queueCapacity < 1) {
                throw new IllegalArgumentException("platform.publish.batch max-size, buckets, max-in-flight,"
                        + " max-claims-in-flight and queue-capacity must be positive");
            }
            if (maxDelay.isNegative() || maxGap.isNegative() || admissionTimeout.isNegative() || admissionTimeout.isZero()) {
                throw new IllegalArgumentException(
                        "platform.publish.batch max-delay and max-gap must not be negative and admission-timeout must be positive");
            }
        }
    }
}
