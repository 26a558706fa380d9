package com.supermarket.store.durability;

import org.springframework.context.ApplicationEvent;

/**
 * Published once the counts hold their durable state ({@link CountsRecovery}): only then may
 * the shard consumers count and the query listener answer.
 */
public final class CountsRecovered extends ApplicationEvent {

    CountsRecovered(CountsRecovery source) {
        super(source);
    }
}
