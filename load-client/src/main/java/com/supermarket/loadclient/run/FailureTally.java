package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.supermarket.loadclient.result.RequestType;

/**
 * Counts failed attempts by HTTP status and by error kind, and logs them to stderr at most
 * once per second (the rest are counted as suppressed and mentioned in the next line), so a
 * dead server cannot flood the terminal. Also counts, per request, whether its first attempt
 * failed, how many retries it took, and whether it failed for good; and a purchase that failed for
 * good as maybe accepted or refused ({@link com.supermarket.loadclient.result.PurchaseOutcomes}).
 * <p>
 * Thread-safe and lock-free on the counting path: {@link ConcurrentHashMap} of {@link LongAdder}s.
 */
final class FailureTally {

    private static final long LOG_INTERVAL_NANOS = 1_000_000_000L;
    private static final int BODY_SNIPPET = 160;

    private final ConcurrentHashMap<String, LongAdder> byStatus = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> byError = new ConcurrentHashMap<>();
    private final LongAdder failedAttempts = new LongAdder();
    private final LongAdder firstTryFailures = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder finalFailures = new LongAdder();
    private final LongAdder purchasesMaybeAccepted = new LongAdder();
    private final LongAdder purchasesRefused = new LongAdder();
    private final AtomicLong nextLogNanos = new AtomicLong(System.nanoTime());
    private final AtomicLong suppressed = new AtomicLong();
    private final PrintStream log;
    // Null without --metrics-port.
    private final LiveMetrics live;

    FailureTally(PrintStream log) {
        this(log, null);
    }

    /** @param live the run's live metrics, or null for none */
    FailureTally(PrintStream log, LiveMetrics live) {
        this.log = log;
        this.live = live;
    }

    void status(int status, RequestType type, String path, String body) {
        count(byStatus, "status", Integer.toString(status));
        log(() -> type.csvName() + " " + path + " -> " + status + " " + snippet(body));
    }

    void error(Throwable error, RequestType type, String path) {
        count(byError, "error", errorKind(error));
        log(() -> type.csvName() + " " + path + " -> " + error);
    }

    /** A request's first attempt failed. */
    void firstTryFailed() {
        firstTryFailures.increment();
    }

    /** A request is being sent again. */
    void retried() {
        retries.increment();
    }

    /** A request failed and will not be sent again. */
    void gaveUp(RequestType type) {
        finalFailures.increment();
        if (live != null) {
            live.failed(type);
        }
    }

    /**
     * A purchase failed for good.
     *
     * @param promisedNothing some attempt got an answer that promises nothing either way (5xx,
     *                        timeout, connection lost after sending), so it may have been accepted
     */
    void purchaseFailed(boolean promisedNothing) {
        (promisedNothing ? purchasesMaybeAccepted : purchasesRefused).increment();
    }

    long purchasesMaybeAccepted() {
        return purchasesMaybeAccepted.sum();
    }

    long purchasesRefused() {
        return purchasesRefused.sum();
    }

    /** Failed attempts (first tries and retries), as counted by status and by error. */
    long failedAttempts() {
        return failedAttempts.sum();
    }

    long firstTryFailures() {
        return firstTryFailures.sum();
    }

    long retries() {
        return retries.sum();
    }

    /** Requests that failed for good: the run's {@code failed}. */
    long finalFailures() {
        return finalFailures.sum();
    }

    Map<String, Long> byStatus() {
        return snapshot(byStatus);
    }

    Map<String, Long> byError() {
        return snapshot(byError);
    }

    private void count(ConcurrentHashMap<String, LongAdder> counters, String kind, String key) {
        counters.computeIfAbsent(key, k -> live == null ? new LongAdder() : live.failedAttempts(kind, k, new LongAdder()))
                .increment();
        failedAttempts.increment();
    }

    private void log(java.util.function.Supplier<String> line) {
        long now = System.nanoTime();
        long next = nextLogNanos.get();
        if (now - next >= 0 && nextLogNanos.compareAndSet(next, now + LOG_INTERVAL_NANOS)) {
            long skipped = suppressed.getAndSet(0);
            log.println("\n[load-client] request failed: " + line.get()
                    + (skipped > 0 ? " (" + skipped + " more failures not shown)" : ""));
        } else {
            suppressed.incrementAndGet();
        }
    }

    /**
     * The exception's class (any refused or failed connect is a {@code ConnectException}); for a bare {@code IOException} also its message (e.g. "HTTP/1.1
     * header parser received no bytes", a connection closed by the server), which is the only
     * thing telling such failures apart.
     */
    static String errorKind(Throwable error) {
        if (error instanceof java.net.ConnectException) {
            // Netty's transports throw their own subclasses; the kind is what a person reads.
            return "ConnectException";
        }
        String kind = error.getClass().getSimpleName();
        if (error.getClass() == java.io.IOException.class && error.getMessage() != null) {
            String message = error.getMessage();
            return kind + ": " + (message.length() <= 60 ? message : message.substring(0, 60));
        }
        return kind;
    }

    private static String snippet(String body) {
        if (body == null || body.isEmpty()) {
            return "";
        }
        String flat = body.replaceAll("\\s+", " ");
        return flat.length() <= BODY_SNIPPET ? flat : flat.substring(0, BODY_SNIPPET) + "...";
    }

    private static Map<String, Long> snapshot(ConcurrentHashMap<String, LongAdder> counters) {
        Map<String, Long> copy = new TreeMap<>();
        counters.forEach((key, adder) -> copy.put(key, adder.sum()));
        return copy;
    }
}
