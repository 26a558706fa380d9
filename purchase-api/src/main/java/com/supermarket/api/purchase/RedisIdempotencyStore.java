package com.supermarket.api.purchase;

import com.supermarket.api.Deadlines;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.EpollProvider;
import io.lettuce.core.resource.ExtendedKeepAliveSupport;
import io.lettuce.core.resource.IOUringProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotency store on Redis: one key per {@code Idempotency-Key} of a store,
 * {@code <prefix><key id>} -> fingerprint, with a TTL. A claim is {@code SET key fingerprint NX PX ttl GET} (Redis 7.0 or
 * newer): atomic per key, it binds a free key and returns the value a taken one holds, so a
 * batch's claims are one pipelined write and one round trip, whatever their outcome, and the
 * caller does not wait for the replies. Once the key's purchase is confirmed, {@link #confirmed}
 * appends {@value #CONFIRMED_MARK} to its fingerprint ({@code SET ... XX KEEPTTL}, the expiry
 * kept), which a later claim reads as {@link Outcome#CONFIRMED}.
 *
 * <p>Never blocks startup nor its caller: the connection is opened in the background from
 * construction, so that the first purchases after a start find it open rather than pay for it
 * (a cold JVM under a full load of tills took over a second to connect, and refused its first
 * keyed purchases with {@code 503}). A claim made while an attempt is in progress is written
 * once it succeeds, within the claim's timeout (an attempt that takes longer goes on, and later
 * claims use it); a failed attempt is retried, on a claim, no sooner than one timeout after it
 * failed, and the claims meanwhile fail at once, so a Redis that comes up after the API is used
 * from the first claim after it. Once connected, Lettuce reconnects by itself (every second at
 * most) after a reset or a close, and rejects commands while disconnected rather than queueing
 * them, so an outage refuses keyed purchases at once instead of parking them.
 *
 * <p>A dead link is dropped within seconds rather than the quarter of an hour TCP takes to give
 * up on unacknowledged data. A link that takes bytes and never answers (a paused or wedged
 * redis-server, a peer behind a partition whose kernel still acknowledges) is only seen by the
 * application: once {@value #TIMEOUTS_BEFORE_RECONNECT} claims in a row timed out on one
 * connection, it is closed and a new one opened. A silent peer on an idle link is found by TCP
 * keepalive probes ({@link #KEEPALIVE_IDLE} idle, then every {@link #KEEPALIVE_INTERVAL},
 * {@value #KEEPALIVE_PROBES} unanswered: ~8 s, NIO on Java 11+ sets these), and unacknowledged
 * data by {@code TCP_USER_TIMEOUT} (the same 8 s) where Netty's epoll or io_uring transport is
 * on the class path; the API ships with NIO, so there the claim timeouts do that work.
 *
 * <p>Thread-safe: {@link #claim} and {@link #confirmed} may be called from any thread (the
 * publisher's request threads, Lettuce's, the broker's confirms); the connection in use is
 * swapped by compare-and-set, and each pipelined write holds the connection's monitor because
 * auto-flush is switched off around it. The futures
 * complete on Lettuce's I/O thread or the {@link Deadlines} thread; {@link #close} once, at
 * shutdown.
 */
final class RedisIdempotencyStore implements IdempotencyStore {

    private static final Logger log = LoggerFactory.getLogger(RedisIdempotencyStore.class);
    /**
     * Claims in a row that timed out on one connection before it is taken for dead: one timeout
     * may be a slow command or a pause of Redis; three, with no answer between them, are a link
     * that does not answer.
     */
    static final int TIMEOUTS_BEFORE_RECONNECT = 3;
    static final Duration KEEPALIVE_IDLE = Duration.ofSeconds(5);
    static final Duration KEEPALIVE_INTERVAL = Duration.ofSeconds(1);
    static final int KEEPALIVE_PROBES = 3;
    /** Appended to a key's fingerprint once its purchase was confirmed. */
    static final char CONFIRMED_MARK = '+';

    private final IdempotencyProperties properties;
    private final Deadlines deadlines;
    private final RedisURI uri;
    private final ClientResources resources;
    private final RedisClient client;
    private final SetArgs claimArgs;
    /** Marks a bound key's purchase confirmed: only a key still held, keeping its expiry. */
    private final SetArgs confirmArgs = SetArgs.Builder.xx().keepttl();
    /**
     * The connection: completed with the open link, pending while one opens, failed when the
     * last attempt failed. Replaced by compare-and-set: a failed attempt by a claim that retries,
     * a dead link by the thread that saw its last timeout.
     */
    private final AtomicReference<CompletableFuture<Link>> current = new AtomicReference<>();
    /** When the last attempt failed, and why; written before its future fails. */
    private volatile long failedAtNanos;
    private volatile String lastProblem = "";

    /** One open connection and how many claims in a row timed out on it. */
    private record Link(StatefulRedisConnection<String, String> redis, AtomicInteger timeoutsInARow) {
    }

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
                .socketOptions(socketOptions(properties.timeout()))
                .timeoutOptions(TimeoutOptions.enabled(properties.timeout()))
                .build());
        this.claimArgs = SetArgs.Builder.nx().px(properties.ttl().toMillis());
        CompletableFuture<Link> first = new CompletableFuture<>();
        current.set(first);
        open(first);
    }

    private static SocketOptions socketOptions(Duration connectTimeout) {
        SocketOptions.Builder socket = SocketOptions.builder().connectTimeout(connectTimeout);
        if (ExtendedKeepAliveSupport.isSupported()) {
            socket.keepAlive(SocketOptions.KeepAliveOptions.builder().enable()
                    .idle(KEEPALIVE_IDLE).interval(KEEPALIVE_INTERVAL).count(KEEPALIVE_PROBES).build());
        } else {
            socket.keepAlive(true);
        }
        // Lettuce refuses to connect when asked for TCP_USER_TIMEOUT without a native transport.
        if (EpollProvider.isAvailable() || IOUringProvider.isAvailable()) {
            socket.tcpUserTimeout(SocketOptions.TcpUserTimeoutOptions.builder().enable()
                    .tcpUserTimeout(KEEPALIVE_IDLE.plus(KEEPALIVE_INTERVAL.multipliedBy(KEEPALIVE_PROBES))).build());
        }
        return socket.build();
    }

    @Override
    public boolean enabled() {
        return true;
    }

    /** One timeout: a claim's wait for the connection and its replies share one deadline. */
    @Override
    public Duration maxWait() {
        return properties.timeout();
    }

    /**
     * Writes the claims (on the caller's thread when the connection is open, else once it opens)
     * and answers when Redis has replied to all of them, on Lettuce's I/O thread; or fails with
     * an {@link IdempotencyStoreUnavailableException} at the timeout. Never waits.
     */
    @Override
    public CompletableFuture<List<Outcome>> claim(List<Claim> claims) {
        long start = System.nanoTime();
        CompletableFuture<Link> link;
        try {
            link = link(start);
        } catch (IdempotencyStoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<List<Outcome>> replied = new CompletableFuture<>();
        link.whenComplete((open, failure) -> {
            if (failure != null) {
                replied.completeExceptionally(unavailable("cannot connect to Redis at " + where() + " (" + lastProblem + ")",
                        failure));
            } else if (!replied.isDone()) { // a claim that outlived its wait for the connection binds nothing
                write(open, claims, replied);
            }
        });
        deadlines.timeOut(replied, properties.timeout().minusNanos(System.nanoTime() - start));
        CompletableFuture<List<Outcome>> outcomes = new CompletableFuture<>();
        replied.whenComplete((answered, error) -> {
            if (error == null) {
                outcomes.complete(answered);
            } else if (error instanceof TimeoutException) {
                outcomes.completeExceptionally(link.isDone()
                        ? unavailable("Redis did not answer within " + properties.timeout().toMillis() + " ms", error)
                        : unavailable("still connecting to Redis at " + where() + " after " + properties.timeout().toMillis()
                                + " ms", error));
            } else {
                outcomes.completeExceptionally(error);
            }
        });
        return outcomes;
    }

    /** The connection, open or opening; a failed attempt is retried once a timeout old. */
    private CompletableFuture<Link> link(long now) {
        CompletableFuture<Link> link = current.get();
        if (!link.isCompletedExceptionally()) {
            return link;
        }
        if (now - failedAtNanos - properties.timeout().toNanos() < 0) {
            throw unavailable("cannot connect to Redis at " + where() + " (" + lastProblem + ")", null);
        }
        CompletableFuture<Link> retry = new CompletableFuture<>();
        if (!current.compareAndSet(link, retry)) {
            return current.get(); // another claim retried first
        }
        open(retry);
        return retry;
    }

    /** Pipelines the claims on {@code link} and completes {@code replied} with what Redis answered. */
    private void write(Link link, List<Claim> claims, CompletableFuture<List<Outcome>> replied) {
        StatefulRedisConnection<String, String> redis = link.redis();
        RedisAsyncCommands<String, String> commands = redis.async();
        CompletableFuture<?>[] replies = new CompletableFuture<?>[claims.size()];
        synchronized (link) {
            redis.setAutoFlushCommands(false);
            try {
                for (int i = 0; i < replies.length; i++) {
                    Claim claim = claims.get(i);
                    replies[i] = commands.setGet(properties.keyPrefix() + claim.key(), claim.fingerprint(), claimArgs)
                            .toCompletableFuture();
                }
                redis.flushCommands();
            } catch (RuntimeException e) {
                replied.completeExceptionally(unavailable("Redis refused the claims (" + e.getMessage() + ")", e));
                return;
            } finally {
                redis.setAutoFlushCommands(true);
            }
        }
        CompletableFuture.allOf(replies).whenComplete((done, error) -> {
            if (error == null) {
                link.timeoutsInARow().set(0);
                replied.complete(outcomes(claims, replies));
                return;
            }
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof RedisCommandTimeoutException) {
                timedOut(link);
            }
            replied.completeExceptionally(unavailable("Redis failed the claim (" + cause.getMessage() + ")", cause));
        });
    }

    private static List<Outcome> outcomes(List<Claim> claims, CompletableFuture<?>[] replies) {
        List<Outcome> outcomes = new ArrayList<>(replies.length);
        for (int i = 0; i < replies.length; i++) {
            String held = (String) replies[i].join(); // complete: allOf succeeded
            String fingerprint = claims.get(i).fingerprint();
            if (held == null) {
                outcomes.add(Outcome.FIRST);
            } else if (held.equals(fingerprint)) {
                outcomes.add(Outcome.SAME);
            } else if (held.length() == fingerprint.length() + 1 && held.startsWith(fingerprint)
                    && held.charAt(fingerprint.length()) == CONFIRMED_MARK) {
                outcomes.add(Outcome.CONFIRMED);
            } else {
                outcomes.add(Outcome.CONFLICT);
            }
        }
        return outcomes;
    }

    /**
     * {@code SET <prefix><key id> <fingerprint>+ XX KEEPTTL} per claim, pipelined on the open
     * connection; nothing when none is open (the retry is then published again, as before).
     */
    @Override
    public void confirmed(List<Claim> claims) {
        CompletableFuture<Link> connecting = current.get();
        if (!connecting.isDone() || connecting.isCompletedExceptionally()) {
            return;
        }
        Link link = connecting.join();
        StatefulRedisConnection<String, String> redis = link.redis();
        RedisAsyncCommands<String, String> commands = redis.async();
        synchronized (link) {
            redis.setAutoFlushCommands(false);
            try {
                for (Claim claim : claims) {
                    commands.set(properties.keyPrefix() + claim.key(), claim.fingerprint() + CONFIRMED_MARK, confirmArgs);
                }
                redis.flushCommands();
            } catch (RuntimeException e) {
                log.debug("idempotency store: could not record {} confirms: {}", claims.size(), e.toString());
            } finally {
                redis.setAutoFlushCommands(true);
            }
        }
    }

    /** Counts a claim that timed out on {@code link}; drops the link and opens another when it is dead. */
    private void timedOut(Link link) {
        if (link.timeoutsInARow().incrementAndGet() != TIMEOUTS_BEFORE_RECONNECT) {
            return;
        }
        CompletableFuture<Link> holding = current.get();
        if (!holding.isDone() || holding.isCompletedExceptionally() || holding.join() != link) {
            return; // already replaced
        }
        CompletableFuture<Link> next = new CompletableFuture<>();
        if (current.compareAndSet(holding, next)) {
            log.warn("idempotency store: {} claims in a row got no answer from Redis at {} within {} ms; closing that"
                    + " connection and opening another", TIMEOUTS_BEFORE_RECONNECT, where(), properties.timeout().toMillis());
            link.redis().closeAsync();
            open(next);
        }
    }

    /** Opens a connection in the background and completes {@code attempt} with it. */
    private void open(CompletableFuture<Link> attempt) {
        client.connectAsync(StringCodec.UTF8, uri).whenComplete((redis, failure) -> {
            if (failure == null) {
                log.info("idempotency store: connected to Redis at {}", where());
                attempt.complete(new Link(redis, new AtomicInteger()));
            } else {
                lastProblem = String.valueOf(failure.getMessage());
                failedAtNanos = System.nanoTime();
                log.warn("idempotency store: cannot connect to Redis at {}: {}", where(), lastProblem);
                attempt.completeExceptionally(failure);
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
        current.get().thenAccept(link -> link.redis().close());
        client.shutdown(Duration.ZERO, properties.timeout());
        resources.shutdown(0, properties.timeout().toMillis(), TimeUnit.MILLISECONDS);
    }
}
