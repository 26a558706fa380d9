package com.supermarket.loadclient.run;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

import com.supermarket.loadclient.result.RequestType;

/**
 * Writes one CSV record per request, off the hot path: each store thread fills its own
 * {@link Buffer} of primitive longs and hands full chunks to a lock-free queue; a single writer
 * thread formats and writes them. Records of one store are in order; stores interleave by chunk.
 * <p>
 * Columns: {@code start_time_epoch_ms,request_type,latency_ms,response_code,store_id}, where
 * {@code response_code} is 0 when no response arrived (connection error or timeout).
 * <p>
 * Thread-safety: {@link #buffer()} and {@link #close()} are called by the run's coordinating
 * thread; each {@link Buffer} is confined to one store thread until it is flushed.
 */
final class CsvSink implements AutoCloseable {

    static final String HEADER = "start_time_epoch_ms,request_type,latency_ms,response_code,store_id";
    private static final int FIELDS = 5;
    private static final int CHUNK_RECORDS = 1024;
    private static final long IDLE_PARK_NANOS = 5_000_000L;
    private static final RequestType[] TYPES = RequestType.values();

    private final ConcurrentLinkedQueue<long[]> chunks = new ConcurrentLinkedQueue<>();
    private final BufferedWriter out;
    private final Thread writer;
    private volatile boolean closing;
    private volatile IOException failure;
    private volatile long busyNanos;

    private CsvSink(Path file) {
        if (file == null) {
            out = null;
            writer = null;
            return;
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
            out.write(HEADER);
            out.write('\n');
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the CSV file " + file, e);
        }
        writer = Thread.ofPlatform().name("csv-writer").daemon().start(this::drain);
    }

    /** A sink writing to {@code file}, or one that drops everything when {@code file} is null. */
    static CsvSink to(Path file) {
        return new CsvSink(file);
    }

    /** Seconds the writer thread spent formatting and writing; final after {@link #close()}. */
    double busySeconds() {
        return busyNanos / 1e9;
    }

    Buffer buffer() {
        return new Buffer(out != null);
    }

    /** Waits until every handed-over chunk is written. Call after flushing every buffer. */
    @Override
    public void close() {
        if (out == null || closing) {
            return;
        }
        closing = true;
        try {
            writer.join();
            out.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            failure = e;
        }
        if (failure != null) {
            throw new UncheckedIOException("writing the CSV file failed", failure);
        }
    }

    private void drain() {
        StringBuilder line = new StringBuilder(64);
        while (true) {
            long[] chunk = chunks.poll();
            if (chunk == null) {
                // closing is set only after the last chunk was queued, so empty + closing = done.
                if (closing && chunks.isEmpty()) {
                    return;
                }
                LockSupport.parkNanos(IDLE_PARK_NANOS);
                continue;
            }
            if (failure == null) {
                long start = System.nanoTime();
                write(chunk, line);
                // Single writer thread: a plain read-modify-write of the volatile is safe.
                busyNanos += System.nanoTime() - start;
            }
        }
    }

    private void write(long[] chunk, StringBuilder line) {
        try {
            for (int i = 0; i + FIELDS <= chunk.length; i += FIELDS) {
                line.setLength(0);
                long micros = chunk[i + 2];
                line.append(chunk[i]).append(',').append(TYPES[(int) chunk[i + 1]].csvName()).append(',')
                        .append(micros / 1000).append('.');
                long fraction = micros % 1000;
                if (fraction < 100) {
                    line.append('0');
                }
                if (fraction < 10) {
                    line.append('0');
                }
                line.append(fraction).append(',').append(chunk[i + 3]).append(',').append(chunk[i + 4]).append('\n');
                out.append(line);
            }
        } catch (IOException e) {
            failure = e;
        }
    }

    /** One store thread's pending records. Not thread-safe: confined to its store thread. */
    final class Buffer {

        private final boolean enabled;
        private long[] chunk;
        private int size;

        private Buffer(boolean enabled) {
            this.enabled = enabled;
            this.chunk = enabled ? new long[CHUNK_RECORDS * FIELDS] : null;
        }

        void add(long startEpochMillis, RequestType type, long latencyMicros, int status, int store) {
            if (!enabled) {
                return;
            }
            chunk[size++] = startEpochMillis;
            chunk[size++] = type.ordinal();
            chunk[size++] = latencyMicros;
            chunk[size++] = status;
            chunk[size++] = store;
            if (size == chunk.length) {
                chunks.offer(chunk);
                chunk = new long[CHUNK_RECORDS * FIELDS];
                size = 0;
            }
        }

        /** Hands over the partial chunk; the store thread must have finished. */
        void flush() {
            if (enabled && size > 0) {
                chunks.offer(Arrays.copyOf(chunk, size));
                size = 0;
            }
        }
    }
}
