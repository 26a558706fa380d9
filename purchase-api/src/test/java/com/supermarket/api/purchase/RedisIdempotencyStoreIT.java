package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.Deadlines;
import com.supermarket.api.testing.TestRedis;
import com.supermarket.contract.testing.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The Redis idempotency store on its own, against the real local Redis through a
 * {@link TcpProxy} that counts its connections ({@link TestRedis}: fails, never skips, when
 * Redis cannot be reached).
 */
class RedisIdempotencyStoreIT {

    /** The first purchases after a start find the connection open: they do not pay for it. */
    @Test
    void connectsAtConstructionBeforeAnyClaimAndClosesOnClose() throws Exception {
        Deadlines deadlines = new Deadlines();
        try (TcpProxy redisLink = TestRedis.link()) {
            RedisIdempotencyStore store = new RedisIdempotencyStore(properties(redisLink, Duration.ofSeconds(1)), deadlines);
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

    /**
     * A Redis that comes up after the API is used from the first claim after it: the attempt made
     * at construction failed more than a timeout before that claim, which tries again at once.
     */
    @Test
    void aRedisThatComesUpAfterTheStartIsUsedFromTheFirstClaim() throws Exception {
        Deadlines deadlines = new Deadlines();
        try (TcpProxy redisLink = TestRedis.link()) {
            redisLink.disconnect();
            RedisIdempotencyStore store = new RedisIdempotencyStore(properties(redisLink, Duration.ofSeconds(1)), deadlines);
            try {
                Thread.sleep(2500); // the attempt made at construction fails and is a timeout old
                redisLink.restore();

                assertThat(store.claim(List.of(new IdempotencyStore.Claim(UUID.randomUUID(), "fingerprint")))
                        .get()).containsExactly(IdempotencyStore.Outcome.FIRST);
            } finally {
                store.close();
            }
        } finally {
            deadlines.destroy();
        }
    }

    /** Keys under a prefix of their own that expire within a minute. */
    private static IdempotencyProperties properties(TcpProxy redisLink, Duration timeout) {
        return new IdempotencyProperties(TestRedis.url(redisLink), Duration.ofMinutes(1), timeout,
                "idem-store-test:" + UUID.randomUUID() + ":");
    }
}
