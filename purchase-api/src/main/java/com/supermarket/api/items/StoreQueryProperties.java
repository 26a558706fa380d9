package com.supermarket.api.items;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The store queries over RPC ({@code api.store-query.*}). Immutable.
 *
 * @param replyTimeout  how long a GET waits for store-service's reply before {@code 504}
 * @param requestExpiry how long a request may wait on {@code store.rpc} before the broker drops
 *                      it; shorter than the reply timeout, so that a request store-service takes
 *                      at the last moment is still answered to someone waiting, and a backlog is
 *                      not computed for nobody
 * @param lanes         batches of queries awaiting their replies at once, one thread each; fewer
 *                      make larger batches
 * @param maxBatch      most queries in one message
 * @param queueCapacity queries waiting for a lane; beyond it a GET is refused at once with
 *                      {@code 503}
 */
@ConfigurationProperties("api.store-query")
record StoreQueryProperties(@DefaultValue("3s") Duration replyTimeout, @DefaultValue("2s") Duration requestExpiry,
                     @DefaultValue("2") int lanes, @DefaultValue("100") int maxBatch,
                     @DefaultValue("10000") int queueCapacity) {

    StoreQueryProperties {
        if (lanes < 1 || maxBatch < 1 || queueCapacity < 1) {
            throw new IllegalArgumentException("api.store-query lanes, max-batch and queue-capacity must be positive");
        }
        if (requestExpiry.isNegative() || requestExpiry.isZero() || requestExpiry.compareTo(replyTimeout) >= 0) {
            throw new IllegalArgumentException("api.store-query.request-expiry (" + requestExpiry
                    + ") must be positive and shorter than api.store-query.reply-timeout (" + replyTimeout + ")");
        }
    }
}
