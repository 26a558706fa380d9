package com.supermarket.api.purchase;

import com.supermarket.api.Deadlines;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The idempotency store: Redis when {@code API_IDEMPOTENCY_REDIS_URL} is set, otherwise none. */
@Configuration(proxyBeanMethods = false)
class IdempotencyConfiguration {

    private static final Logger log = LoggerFactory.getLogger(IdempotencyConfiguration.class);

    @Bean(destroyMethod = "close")
    IdempotencyStore idempotencyStore(IdempotencyProperties properties, Deadlines deadlines) {
        if (!properties.enabled()) {
            log.info("idempotency store off (API_IDEMPOTENCY_REDIS_URL is empty): a reused Idempotency-Key with a different"
                    + " body is another purchase, answered 201 with an id of its own");
            return IdempotencyStore.OFF;
        }
        return new RedisIdempotencyStore(properties, deadlines);
    }
}
