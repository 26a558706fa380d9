package com.supermarket.store.query;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The RPC server's settings.
 *
 * @param rpcConsumers concurrent consumers of the RPC queue (read by the listener annotation)
 */
@ConfigurationProperties("store.query")
record QueryProperties(int rpcConsumers) {

    QueryProperties {
        if (rpcConsumers < 1) {
            throw new IllegalArgumentException("store.query.rpc-consumers must be positive");
        }
    }
}
