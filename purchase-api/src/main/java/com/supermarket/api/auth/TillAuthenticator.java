package com.supermarket.api.auth;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * Decides whether a request may do what it asks, from the store id of its path and its
 * {@code Authorization: Bearer <key>} header; free of any web framework so that every HTTP
 * layer (a servlet interceptor, a WebFlux filter) calls the same decision.
 * <p>
 * Cost per request: one SHA-256 of the key (about 50 bytes), one lookup in an open-addressing
 * table, one constant-time comparison of 32 bytes; the digest object is cloned from a prototype
 * (no provider lookup). Refusals increment a counter per reason (built once) and write one log
 * line each, rate-limited, naming the reason, the request and a short fingerprint of the
 * presented key's hash (never the key).
 * <p>
 * Thread-safe: the key table is read through {@link TillKeys#current()} (a volatile read), the
 * rest is immutable or atomic.
 */
public final class TillAuthenticator {

    private static final String BEARER = "Bearer ";
    private static final int MAX_KEY_LENGTH = 256;
    private static final HexFormat HEX = HexFormat.of();

    private final TillKeys keys;
    private final LongSupplier clock;
    private final MessageDigest prototype;
    private final Map<AuthDecision, Counter> refusals = new EnumMap<>(AuthDecision.class);
    private final RefusalLog refusalLog;

    TillAuthenticator(TillKeys keys, MeterRegistry registry, int refusalLinesPerSecond, LongSupplier clock) {
        this.keys = keys;
        this.clock = clock;
        try {
            this.prototype = MessageDigest.getInstance("SHA-256");
            prototype.clone();
        } catch (NoSuchAlgorithmException | CloneNotSupportedException e) {
            throw new IllegalStateException("SHA-256 must be available and cloneable", e);
        }
        for (AuthDecision decision : AuthDecision.values()) {
            if (!decision.allowed()) {
                refusals.put(decision, Counter.builder("api.till.auth.refused")
                        .description("Requests refused by till authentication (401 or 403), by reason")
                        .tag("reason", decision.name()).register(registry));
            }
        }
        Gauge.builder("api.till.auth.keys", keys, k -> k.current().size())
                .description("Till and manager key hashes in force").register(registry);
        Gauge.builder("api.till.auth.reload.failures", keys, TillKeys::failedReloads)
                .description("Reloads of the key hashes file that failed (the previous keys stayed in force)")
                .register(registry);
        this.refusalLog = new RefusalLog(LoggerFactory.getLogger(TillAuthenticator.class), refusalLinesPerSecond,
                System::nanoTime);
    }

    /**
     * @param access        what the request does
     * @param storePath     the {@code storeID} of the path as sent (null for {@link Access#ITEM_QUERY});
     *                      a value that is not a number is left to the request's validation (400)
     *                      once the key itself is valid
     * @param authorization the {@code Authorization} header, or null
     * @param method        the HTTP method, for the refusal log line only
     * @param path          the request path, for the refusal log line only
     */
    public AuthDecision decide(Access access, String storePath, String authorization, String method, String path) {
        if (authorization == null || authorization.isEmpty()) {
            return refuse(AuthDecision.MISSING_KEY, method, path, null, null);
        }
        if (!authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())
                || authorization.length() == BEARER.length() || authorization.length() > BEARER.length() + MAX_KEY_LENGTH) {
            return refuse(AuthDecision.MALFORMED_HEADER, method, path, null, null);
        }
        MessageDigest digest = newDigest();
        for (int i = BEARER.length(); i < authorization.length(); i++) {
            char c = authorization.charAt(i);
            if (c <= ' ' || c > '~') {
                return refuse(AuthDecision.MALFORMED_HEADER, method, path, null, null);
            }
            digest.update((byte) c);
        }
        byte[] hash = digest.digest();
        TillKeyTable.Entry entry = keys.current().find(hash);
        if (entry == null) {
            return refuse(AuthDecision.UNKNOWN_KEY, method, path, hash, null);
        }
        if (clock.getAsLong() > entry.notAfter()) {
            return refuse(AuthDecision.EXPIRED_KEY, method, path, hash, entry);
        }
        AuthDecision decision = switch (access) {
            case PURCHASE -> entry.isManager() ? AuthDecision.MANAGER_CANNOT_POST : sameStore(entry, storePath);
            case STORE_QUERY -> entry.isManager() ? AuthDecision.ALLOWED : sameStore(entry, storePath);
            case ITEM_QUERY -> entry.isManager() ? AuthDecision.ALLOWED : AuthDecision.MANAGER_ONLY;
        };
        return decision.allowed() ? decision : refuse(decision, method, path, hash, entry);
    }

    /** The key's store against the path's: numerically ("07" is store 7); a non-number passes to validation. */
    private static AuthDecision sameStore(TillKeyTable.Entry entry, String storePath) {
        if (storePath == null || storePath.isEmpty() || storePath.length() > 18) {
            return AuthDecision.ALLOWED;
        }
        long store = 0;
        for (int i = 0; i < storePath.length(); i++) {
            char c = storePath.charAt(i);
            if (c < '0' || c > '9') {
                return AuthDecision.ALLOWED;
            }
            store = store * 10 + (c - '0');
        }
        return store == entry.scope() ? AuthDecision.ALLOWED : AuthDecision.OTHER_STORE;
    }

    private MessageDigest newDigest() {
        try {
            return (MessageDigest) prototype.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }

    private AuthDecision refuse(AuthDecision decision, String method, String path, byte[] hash, TillKeyTable.Entry entry) {
        refusals.get(decision).increment();
        // The first 4 bytes of the key's SHA-256 tell repeated attempts of one key apart without
        // revealing anything usable; the key itself is never logged.
        String line = "till authentication refused " + method + " " + path + ": " + decision + " (" + decision.status() + ")"
                + (hash == null ? "" : ", key hash " + HEX.formatHex(hash, 0, 4) + "...")
                + (entry == null ? "" : ", " + entry.describe());
        refusalLog.refused(line);
        return decision;
    }
}
