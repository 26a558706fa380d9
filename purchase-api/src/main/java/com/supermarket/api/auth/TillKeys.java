package com.supermarket.api.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The till key hashes, read from a file (locally a path, on Kubernetes a mounted Secret) and read
 * again every {@code reloadInterval}: a changed file replaces the table without a restart, so a
 * key is issued, rotated or revoked by rewriting the file (kubelet refreshes a mounted Secret
 * within about a minute). A file that cannot be read or parsed keeps the previous table (an
 * ERROR line per attempt); only the first load must succeed.
 * <p>
 * Thread-safety: {@link #current()} is a volatile read of an immutable table, safe from any
 * thread; reloads run on one daemon thread of its own (or on the caller of {@link #reload()}).
 */
final class TillKeys implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TillKeys.class);

    /** What one reload did. */
    enum ReloadOutcome { CHANGED, UNCHANGED, FAILED }

    private final Path file;
    private final AtomicLong failedReloads = new AtomicLong();
    private volatile TillKeyTable table;
    private volatile byte[] loaded;
    private ScheduledExecutorService reloader;

    /**
     * Loads the file once.
     *
     * @throws IllegalStateException when it cannot be read or parsed: with authentication on, a
     *                               wrong path must stop the start, not refuse every till
     */
    TillKeys(Path file) {
        this.file = file;
        try {
            byte[] bytes = Files.readAllBytes(file);
            this.table = TillKeyTable.parse(new String(bytes, StandardCharsets.UTF_8));
            this.loaded = bytes;
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot load the till key hashes from " + file + ": " + e.getMessage(), e);
        }
        log.info("loaded {} till key hashes ({} manager keys) from {}", table.size(), table.managerKeys(), file);
    }

    /** Starts reading the file again every {@code interval} on a daemon thread. */
    synchronized TillKeys startReloading(Duration interval) {
        if (reloader == null) {
            reloader = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("till-keys-reload").daemon().factory());
            long millis = interval.toMillis();
            reloader.scheduleWithFixedDelay(this::reload, millis, millis, TimeUnit.MILLISECONDS);
        }
        return this;
    }

    TillKeyTable current() {
        return table;
    }

    long failedReloads() {
        return failedReloads.get();
    }

    /** Reads the file; swaps the table in when its bytes changed and parse. */
    ReloadOutcome reload() {
        byte[] bytes;
        TillKeyTable next;
        try {
            bytes = Files.readAllBytes(file);
            if (Arrays.equals(bytes, loaded)) {
                return ReloadOutcome.UNCHANGED;
            }
            next = TillKeyTable.parse(new String(bytes, StandardCharsets.UTF_8));
        } catch (IOException | IllegalArgumentException | SecurityException e) {
            failedReloads.incrementAndGet();
            log.error("till key hashes in {} not reloaded, the previous {} keys stay in force: {}", file, table.size(),
                    e instanceof IllegalArgumentException ? e.getMessage() : e.toString());
            return ReloadOutcome.FAILED;
        }
        table = next;
        loaded = bytes;
        log.info("reloaded {} till key hashes ({} manager keys) from {}", next.size(), next.managerKeys(), file);
        return ReloadOutcome.CHANGED;
    }

    @Override
    public synchronized void close() {
        if (reloader != null) {
            reloader.shutdownNow();
            reloader = null;
        }
    }
}
