package com.supermarket.api.purchase;

import com.supermarket.api.Deadlines;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotency store on Redis: one key per {@code Idempotency-Key} of a store,
 * {@code <prefix><key id>} -> fingerprint, with a TTL. A claim is {@code SET key fingerprint NX PX ttl GET} (Redis 7.0 or
 * newer): atomic per key, it binds a free key and returns the value a taken one holds, so a
 * batch's claims are one pipelined write and one round trip, whatever their outcome, and the
 * caller does not wait for the replies.
 *
 * <p>Never blocks startup: the connection is opened in the background from construction, so
 * that the first purchases after a start find it open rather than pay for it (a cold JVM under
 * a full load of tills took over a second to connect, and refused its first keyed purchases
 * with {@code 503}). A claim waits for an attempt in progress up to the timeout (an attempt that
 * takes longer goes on, and a later claim picks it up); a failed attempt is retried, on a
 * claim, no sooner than one timeout after it failed, and the claims meanwhile fail at once, so
 * a Redis that comes up after the API is used from the first claim after it. Once connected,
 * Lettuce reconnects by itself (every second at most) and rejects commands while disconnected
 * rather than queueing them, so an outage refuses keyed purchases at once instead of parking
 * them.
 *
 * <p>Not thread-safe: {@link #claim} is called by the publisher's one sender thread only (the
 * connection's auto-flush is switched off around each pipelined write); the futures it returns
 * complete on Lettuce's I/O thread; {@link #close} once, at shutdown.
 */
final class RedisIdempotencyStore implements IdempotencyStore {

    private static final Logger log = LoggerFactory.getLogger(RedisIdempotencyStore.class);

    private final IdempotencyProperties properties;
    private final Deadlines deadlines;
    private final RedisURI uri;
    private final ClientResources resources;
    private final RedisClient client;
    private final SetArgs claimArgs;
    /** Written by the sender thread, read by {@link #close}. */
    private volatile StatefulRedisConnection<String, String> connection;
    private volatile CompletableFuture<StatefulRedisConnection<String, String>> connecting;
    private long nextAttemptNanos;
    /** When the last attempt failed; written on Lettuce's thread before its future completes. */
    private volatile long failedAtNanos;
    private String lastProblem = "";

    RedisIdempotencyStore(IdempotencyProperties properties, Deadlines deadlines) {
        this.properties = properties;
        this.deadlines = deadlines;
        this.uri = RedisURI.create(properties.redisUrl());
        uri.setTimeout(properties.timeout());
        this.resources = ClientResources.builder()
                .ioThreadPoolSize(1)
                .computationThreadPoolSize(1)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        this.client = RedisClient.create(resources);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(SocketOptions.builder().connectTimeout(properties.timeout()).keepAlive(true).build())
                .timeoutOptions(TimeoutOptions.enabled(properties.timeout()))
                .build());
        this.claimArgs = SetArgs.Builder.nx().px(properties.ttl().toMillis());
        this.connecting = connect();
    }

    @Override
    public boolean enabled() {
        return true;
    }

    /** One timeout: a claim's connection attempt and its replies share one deadline. */
    @Override
    public Duration maxWait() {
        return properties.timeout();
    }

    /**
     * Writes the claims at once (the caller's thread, the sender's) and answers when Redis has
     * replied to all of them; the replies complete on Lettuce's I/O thread. Blocks only while a
     * connection is being opened (startup, or Redis not reached yet), never for the replies.
     */
    @Override
    public CompletableFuture<List<Outcome>> claim(List<Claim> claims) {
        long deadline = System.nanoTime() + properties.timeout().toNanos();
        StatefulRedisConnection<String, String> redis;
        try {
            redis = connection(deadline);
        } catch (IdempotencyStoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        RedisAsyncCommands<String, String> commands = redis.async();
        CompletableFuture<?>[] replies = new CompletableFuture<?>[claims.size()];
        redis.setAutoFlushCommands(false);
        try {
            for (int i = 0; i < replies.length; i++) {
                Claim claim = claims.get(i);
                replies[i] = commands.setGet(properties.keyPrefix() + claim.key(), claim.fingerprint(), claimArgs)
                        .toCompletableFuture();
            }
            redis.flushCommands();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(unavailable("Redis refused the claims (" + e.getMessage() + ")", e));
        } finally {
            redis.setAutoFlushCommands(true);
        }
        CompletableFuture<List<Outcome>> outcomes = new CompletableFuture<>();
        CompletableFuture<Void> all = CompletableFuture.allOf(replies);
        deadlines.timeOut(all, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        all.whenComplete((done, error) -> {
            if (error == null) {
                outcomes.complete(outcomes(claims, replies));
                return;
            }
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            outcomes.completeExceptionally(cause instanceof TimeoutException
                    ? unavailable("Redis did not answer within " + properties.timeout().toMillis() + " ms", cause)
                    : unavailable("Redis failed the claim (" + cause.getMessage() + ")", cause));
        });
        return outcomes;
    }

    private static List<Outcome> outcomes(List<Claim> claims, CompletableFuture<?>[] replies) {
        List<Outcome> outcomes = new ArrayList<>(replies.length);
        for (int i = 0; i < replies.length; i++) {
            Object held = replies[i].join(); // complete: allOf succeeded
            if (held == null) {
                outcomes.add(Outcome.FIRST);
            } else {
                outcomes.add(held.equals(claims.get(i).fingerprint()) ? Outcome.SAME : Outcome.CONFLICT);
            }
        }
        return outcomes;
    }

    /** The connection, awaiting the attempt in progress up to the timeout, or starting one when due. */
    private StatefulRedisConnection<String, String> connection(long deadline) {
        if (connection != null) {
            return connection; // reconnects by itself from here on
        }
        if (connecting == null) {
            if (System.nanoTime() - nextAttemptNanos < 0) {
                throw unavailable("cannot connect to Redis at " + where() + " (" + lastProblem + ")", null);
            }
            connecting = connect();
        }
        try {
            connection = connecting.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            connecting = null;
            log.info("idempotency store: connected to Redis at {}", where());
            return connection;
        } catch (TimeoutException e) {
            // The attempt goes on; a later claim picks up its result.
            throw unavailable("still connecting to Redis at " + where() + " after " + properties.timeout().toMillis() + " ms", e);
        } catch (ExecutionException e) {
            connecting = null;
            nextAttemptNanos = failedAtNanos + properties.timeout().toNanos();
            lastProblem = String.valueOf(e.getCause().getMessage());
            log.warn("idempotency store: cannot connect to Redis at {}: {}", where(), lastProblem);
            if (System.nanoTime() - nextAttemptNanos >= 0) {
                // The attempt failed long before this claim (the one made at startup): try now.
                return connection(deadline);
            }
            throw unavailable("cannot connect to Redis at " + where() + " (" + lastProblem + ")", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable("interrupted while connecting to Redis", e);
        }
    }

    private CompletableFuture<StatefulRedisConnection<String, String>> connect() {
        return client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture().whenComplete((connected, failure) -> {
            if (failure != null) {
                failedAtNanos = System.nanoTime();
            }
        });
    }

    /** Host and port only: the URL may hold a password. */
    private String where() {
        return uri.getHost() + ":" + uri.getPort();
    }

    private static IdempotencyStoreUnavailableException unavailable(String message, Throwable cause) {
        return new IdempotencyStoreUnavailableException(message, cause);
    }

    @Override
    public void close() {
        CompletableFuture<StatefulRedisConnection<String, String>> pending = connecting;
        if (pending != null) {
            pending.thenAccept(StatefulRedisConnection::close);
        }
        if (connection != null) {
            connection.close();
        }
        client.shutdown(Duration.ZERO, properties.timeout());
        resources.shutdown(0, properties.timeout().toMillis(), TimeUnit.MILLISECONDS);
    }
}
