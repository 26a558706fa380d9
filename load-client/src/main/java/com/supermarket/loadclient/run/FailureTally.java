package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.supermarket.loadclient.result.RequestType;

/**
 * Counts failed requests by HTTP status and by error kind, and logs them to stderr at most
 * once per second (the rest are counted as suppressed and mentioned in the next line), so a
 * dead server cannot flood the terminal.
 * <p>
 * Thread-safe and lock-free on the counting path: {@link ConcurrentHashMap} of {@link LongAdder}s.
 */
final class FailureTally {

    private static final long LOG_INTERVAL_NANOS = 1_000_000_000L;
    private static final int BODY_SNIPPET = 160;

    private final ConcurrentHashMap<String, LongAdder> byStatus = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> byError = new ConcurrentHashMap<>();
    private final LongAdder total = new LongAdder();
    private final AtomicLong nextLogNanos = new AtomicLong(System.nanoTime());
    private final AtomicLong suppressed = new AtomicLong();
    private final PrintStream log;

    FailureTally(PrintStream log) {
        this.log = log;
    }

    void status(int status, RequestType type, String path, String body) {
        count(byStatus, Integer.toString(status));
        log(() -> type.csvName() + " " + path + " -> " + status + " " + snippet(body));
    }

    void error(Throwable error, RequestType type, String path) {
        count(byError, errorKind(error));
        log(() -> type.csvName() + " " + path + " -> " + error);
    }

    long total() {
        return total.sum();
    }

    Map<String, Long> byStatus() {
        return snapshot(byStatus);
    }

    Map<String, Long> byError() {
        return snapshot(byError);
    }

    private void count(ConcurrentHashMap<String, LongAdder> counters, String key) {
        counters.computeIfAbsent(key, k -> new LongAdder()).increment();
        total.increment();
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
     * The exception's class; for a bare {@code IOException} also its message (e.g. "HTTP/1.1
     * header parser received no bytes", a connection closed by the server), which is the only
     * thing telling such failures apart.
     */
    static String errorKind(Throwable error) {
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
