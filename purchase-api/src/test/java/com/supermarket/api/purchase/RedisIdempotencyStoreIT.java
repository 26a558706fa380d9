package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.api.Deadlines;
import com.supermarket.api.testing.TestRedis;
import com.supermarket.tools.proxy.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The Redis idempotency store on its own, against the real test Redis through a
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

    /**
     * A link that stops answering for good (a peer gone without a reset, a lost NAT entry) is
     * dropped after a few claims timed out on it, and a new connection serves the claims within
     * seconds: TCP would keep the dead one for a quarter of an hour.
     */
    @Test
    void aDeadLinkIsDroppedAndANewConnectionServesTheClaimsWithinSeconds() throws Exception {
        Deadlines deadlines = new Deadlines();
        try (TcpProxy redisLink = TestRedis.link()) {
            RedisIdempotencyStore store = new RedisIdempotencyStore(properties(redisLink, Duration.ofMillis(300)), deadlines);
            try {
                await("connected").atMost(Duration.ofSeconds(10)).until(() -> answered(store));

                redisLink.freezeOpenConnections();
                assertThat(claimOne(store)).failsWithin(Duration.ofSeconds(5))
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause().isInstanceOf(IdempotencyStore.IdempotencyStoreUnavailableException.class)
                        .withMessageContaining("Redis did not answer within 300 ms");

                await("a claim answered on a new connection").atMost(Duration.ofSeconds(10))
                        .until(() -> answered(store));
                assertThat(redisLink.openConnections()).as("the dead connection and the new one").isEqualTo(2);
            } finally {
                store.close();
            }
        } finally {
            deadlines.destroy();
        }
    }

    /**
     * The publisher's sender thread calls {@link RedisIdempotencyStore#claim}: while the
     * connection is being opened, the claim waits for it without holding the caller.
     */
    @Test
    void aClaimWhileTheConnectionOpensWaitsForItWithoutHoldingTheCaller() throws Exception {
        Deadlines deadlines = new Deadlines();
        try (TcpProxy redisLink = TestRedis.link()) {
            redisLink.freeze(); // the TCP connect succeeds, Redis's handshake never answers
            RedisIdempotencyStore store = new RedisIdempotencyStore(properties(redisLink, Duration.ofMillis(500)), deadlines);
            try {
                CompletableFuture<List<IdempotencyStore.Outcome>> pending = claimOne(store);

                assertThat(pending).as("returned before the connection opened").isNotDone();
                assertThat(pending).failsWithin(Duration.ofSeconds(5))
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause().isInstanceOf(IdempotencyStore.IdempotencyStoreUnavailableException.class);
                redisLink.restore();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> answered(store));
            } finally {
                store.close();
            }
        } finally {
            deadlines.destroy();
        }
    }

    private static boolean answered(RedisIdempotencyStore store) throws Exception {
        return claimOne(store).handle((outcomes, error) -> error == null).get();
    }

    private static CompletableFuture<List<IdempotencyStore.Outcome>> claimOne(RedisIdempotencyStore store) {
        return store.claim(List.of(new IdempotencyStore.Claim(UUID.randomUUID(), "fingerprint")));
    }

    /** Keys under a prefix of their own that expire within a minute. */
    private static IdempotencyProperties properties(TcpProxy redisLink, Duration timeout) {
        return new IdempotencyProperties(TestRedis.url(redisLink), Duration.ofMinutes(1), timeout,
                "idem-store-test:" + UUID.randomUUID() + ":");
    }
}
