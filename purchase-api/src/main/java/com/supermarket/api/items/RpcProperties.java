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
 */
@ConfigurationProperties("platform.rpc")
record RpcProperties(@DefaultValue("3s") Duration replyTimeout, @DefaultValue("2s") Duration requestExpiry) {

    RpcProperties {
        if (requestExpiry.isNegative() || requestExpiry.isZero() || requestExpiry.compareTo(replyTimeout) >= 0) {
            throw new IllegalArgumentException("platform.rpc.request-expiry (" + requestExpiry
                    + ") must be positive and shorter than platform.rpc.reply-timeout (" + replyTimeout + ")");
        }
    }
}
