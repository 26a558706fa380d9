package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.Deadlines;
import com.supermarket.contract.testing.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The Redis idempotency store on its own, against the real local Redis through a
 * {@link TcpProxy} that counts its connections. Fails, never skips, when Redis cannot be
 * reached (as {@link PurchaseIdempotencyIT}).
 */
class RedisIdempotencyStoreIT {

    private static final String REDIS_HOST = env("REDIS_HOST", "127.0.0.1");
    private static final int REDIS_PORT = Integer.parseInt(env("REDIS_PORT", "6379"));

    /**
     * The first purchases after a start find the connection open: they do not pay for it. The
     * claim's key expires within a minute.
     */
    @Test
    void connectsAtConstructionBeforeAnyClaimAndClosesOnClose() throws Exception {
        String prefix = "idem-store-test:" + UUID.randomUUID() + ":";
        Deadlines deadlines = new Deadlines();
        try (TcpProxy redisLink = new TcpProxy(REDIS_HOST, REDIS_PORT)) {
            IdempotencyProperties properties = new IdempotencyProperties(
                    "redis://" + redisLink.host() + ":" + redisLink.port() + "/5", Duration.ofMinutes(1), Duration.ofSeconds(1), prefix);
            RedisIdempotencyStore store = new RedisIdempotencyStore(properties, deadlines);
            try {
                await().atMost(Duration.ofSeconds(5)).until(() -> redisLink.openConnections() == 1);

                assertThat(store.claim(List.of(new IdempotencyStore.Claim(UUID.randomUUID(), "fingerprint")))
                        .get()).containsExactly(IdempotencyStore.Outcome.FIRST);
                assertThat(redisLink.openConnections()).as("the claim used the connection opened at construction").isEqualTo(1);
            } finally {
                store.close();
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> redisLink.openConnections() == 0);
        } finally {
            deadlines.destroy();
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
