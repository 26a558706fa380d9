package com.supermarket.api.items;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The store queries over RPC. Immutable.
 *
 * @param replyTimeout  how long a GET waits for store-service's reply before {@code 504}
 *                      ({@code STORE_RPC_TIMEOUT})
 * @param requestExpiry how long a request may wait on {@code store.rpc} before the broker drops
 *                      it ({@code STORE_RPC_REQUEST_EXPIRY}); shorter than the reply timeout, so
 *                      that a request store-service takes at the last moment is still answered
 *                      to someone waiting, and a backlog is not computed for nobody
 * @param lanes         batches of queries awaiting their replies at once, one thread each
 *                      ({@code STORE_RPC_LANES}); fewer make larger batches
 * @param maxBatch      most queries in one message ({@code STORE_RPC_MAX_BATCH})
 * @param queueCapacity queries waiting for a lane; beyond it a GET is refused at once with
 *                      {@code 503} ({@code STORE_RPC_QUEUE_CAPACITY})
 */
@ConfigurationProperties("platform.rpc")
record RpcProperties(@DefaultValue("3s") Duration replyTimeout, @DefaultValue("2s") Duration requestExpiry,
                     @DefaultValue("2") int lanes, @DefaultValue("100") int maxBatch,
                     @DefaultValue("10000") int queueCapacity) {

    RpcProperties {
        if (lanes < 1 || maxBatch < 1 || queueCapacity < 1) {
            throw new IllegalArgumentException("platform.rpc lanes, max-batch and queue-capacity must be positive");
        }
        if (requestExpiry.isNegative() || requestExpiry.isZero() || requestExpiry.compareTo(replyTimeout) >= 0) {
            throw new IllegalArgumentException("platform.rpc.request-expiry (" + requestExpiry
                    + ") must be positive and shorter than platform.rpc.reply-timeout (" + replyTimeout + ")");
        }
    }
}
