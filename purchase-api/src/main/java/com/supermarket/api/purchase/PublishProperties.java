package com.supermarket.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How purchases are published. Immutable.
 *
 * @param mode           one publish to the ingress fanout, or one to each sharded exchange
 *                       ({@code PUBLISH_MODE})
 * @param persistent     delivery mode 2 (survives a broker restart on durable queues) or
 *                       transient as in the original study ({@code PUBLISH_PERSISTENT})
 * @param confirmTimeout how long a request waits for the broker's confirm before it answers
 *                       {@code 503} ({@code PUBLISH_CONFIRM_TIMEOUT})
 * @param retryAfter     the {@code Retry-After} a refused request suggests ({@code PUBLISH_RETRY_AFTER})
 */
@ConfigurationProperties("platform.publish")
record PublishProperties(@DefaultValue("FANOUT") PublishMode mode,
                         @DefaultValue("true") boolean persistent,
                         @DefaultValue("5s") Duration confirmTimeout,
                         @DefaultValue("1s") Duration retryAfter) {

    PublishProperties {
        if (confirmTimeout.isNegative() || confirmTimeout.isZero()) {
            throw new IllegalArgumentException("platform.publish.confirm-timeout must be positive");
        }
    }

    /** The {@code Retry-After} header value: whole seconds, at least 1. */
    long retryAfterSeconds() {
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }
}
