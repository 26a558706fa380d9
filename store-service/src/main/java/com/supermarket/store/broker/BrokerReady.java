package com.supermarket.store.broker;

/**
 * Proof that the platform topology has been declared (and, if this service manages them, the
 * policies applied): components that consume from the broker take it as a constructor argument,
 * so they are only created once the topology exists. Immutable.
 *
 * @param vhost the virtual host this service works in
 */
public record BrokerReady(String vhost) {
}
