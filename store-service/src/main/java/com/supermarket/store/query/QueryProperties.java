package com.supermarket.store.query;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The RPC server's settings.
 *
 * @param rpcConsumers concurrent consumers of the RPC queue (read by the listener annotation)
 * @param maxLimit     the largest {@code limit} a query may ask for; more is a bad request
 */
@ConfigurationProperties("store.query")
record QueryProperties(int rpcConsumers, int maxLimit) {

    QueryProperties {
        if (rpcConsumers < 1 || maxLimit < 1) {
            throw new IllegalArgumentException("store.query.rpc-consumers and store.query.max-limit must be positive");
        }
    }
}
