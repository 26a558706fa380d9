package com.supermarket.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The idempotency store: which body each {@code Idempotency-Key} was first used with, shared by
 * every purchase-api replica, so that a reused key with a different body is refused with
 * {@code 422}. Immutable.
 *
 * @param redisUrl  the Redis (7.0 or newer) holding the keys, e.g. {@code redis://redis:6379/0}
 *                  ({@code rediss://} for TLS, {@code redis://:password@host} with AUTH); empty switches
 *                  the check off: a reused key with another body is then another purchase,
 *                  answered {@code 201}
 * @param ttl       how long a key stays bound to its first body; longer than any till retries,
 *                  and what Redis must hold: keyed purchases/s x ttl keys
 * @param timeout   bound of one round trip to Redis (and of a connection attempt); beyond it the
 *                  keyed purchases of the batch are refused with {@code 503}
 * @param keyPrefix prefix of the Redis keys, followed by the purchase id that (store, key) gives
 */
@ConfigurationProperties("api.idempotency")
record IdempotencyProperties(@DefaultValue("") String redisUrl,
                             @DefaultValue("24h") Duration ttl,
                             @DefaultValue("1s") Duration timeout,
                             @DefaultValue("idempotency:") String keyPrefix) {

    IdempotencyProperties {
        if (ttl.isNegative() || ttl.isZero() || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("api.idempotency ttl and timeout must be positive");
        }
    }

    boolean enabled() {
        return redisUrl != null && !redisUrl.isBlank();
    }
}
