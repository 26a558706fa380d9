package com.supermarket.api.items;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * @param replyTimeout how long a GET waits for store-service's reply before {@code 504}
 *                     ({@code STORE_RPC_TIMEOUT}); also the request's expiration on the queue
 */
@ConfigurationProperties("platform.rpc")
record RpcTimeout(@DefaultValue("3s") Duration replyTimeout) {
}
