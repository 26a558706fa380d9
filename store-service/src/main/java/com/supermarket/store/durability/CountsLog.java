package com.supermarket.store.durability;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write-ahead log of the counts, written in segments. {@link #append} copies a sealed frame
 * into an in-memory buffer and returns the log position after it; {@link #flush} writes what
 * gathered since the last flush and fsyncs it (group commit: one fsync for every record
 * appended meanwhile) and returns the position up to which the log is durable. {@link #roll} closes the
 * current segment, fsynced, and starts the next, so a snapshot can take over everything before
 * it. Positions count bytes appended since this log was opened, across segments.
 *
 * <p>Thread-safe: appends take a short monitor (a buffer copy); flushes and rolls are
 * serialised by their own lock and write outside the append monitor, into the other of two
 * buffers, so appenders never wait for the disk except during a roll.
 */
final class CountsLog implements Closeable {

    private final StateDirectory directory;
    private final Object appendMonitor = new Object();
    private final ReentrantLock io = new ReentrantLock();

    // Guarded by appendMonitor.
    private ByteBuffer filling = ByteBuffer.allocate(1 << 20);
    private long appended;
    private long bytesInSegment;

    // Guarded by io.
    private ByteBuffer writing = ByteBuffer.allocate(1 << 20);
    private FileChannel segment;
    private long segmentNumber;

    /** Opens a new, empty segment {@code firstSegment}. */
    CountsLog(StateDirectory directory, long firstSegment) throws IOException {
        this.directory = directory;
        this.segmentNumber = firstSegment;
        this.segment = create(firstSegment);
    }

    /** Buffers one sealed frame; returns the log position just after it. */
    long append(ByteBuffer frame) {
        synchronized (appendMonitor) {
            if (filling.remaining() < frame.remaining()) {
                ByteBuffer larger = ByteBuffer.allocate(Math.max(filling.capacity() * 2, filling.position() + frame.remaining()));
                filling.flip();
                larger.put(filling);
                filling = larger;
            }
            bytesInSegment += frame.remaining();
            appended += frame.remaining();
            filling.put(frame);
            return appended;
        }
    }

    /** The position after the last appended frame. */
    long appendedPosition() {
        synchronized (appendMonitor) {
            return appended;
        }
    }

    /** Bytes appended to the current segment, for deciding when to snapshot. */
    long bytesInSegment() {
        synchronized (appendMonitor) {
            return bytesInSegment;
        }
    }

    /** Writes and fsyncs everything appended so far; returns the new durable position. */
    long flush() throws IOException {
        io.lock();
        try {
            long end;
            synchronized (appendMonitor) {
                end = appended;
                swapBuffers();
            }
            if (writing.hasRemaining()) {
                writeAll(segment, writing);
                // fdatasync: the data and the file length, which appended data needs to be found.
                segment.force(false);
            }
            return end;
        } finally {
            io.unlock();
        }
    }

    /**
     * Writes and fsyncs what is buffered into the current segment, closes it and opens the next
     * one; every frame appended before the call is in the closed segment, every later one in the
     * new segment. Appenders wait for this one write and fsync.
     *
     * @return the number of the new segment
     * @throws IOException          if the next segment could not be created; nothing changed then
     * @throws UncheckedIOException if writing or fsyncing the current segment failed: what was
     *                              appended may be lost, as after a failed {@link #flush}
     */
    long roll() throws IOException {
        io.lock();
        try {
            FileChannel next = create(segmentNumber + 1);
            synchronized (appendMonitor) {
                try {
                    swapBuffers();
                    writeAll(segment, writing);
                    segment.force(false);
                    segment.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                segment = next;
                segmentNumber++;
                bytesInSegment = 0;
            }
            return segmentNumber;
        } finally {
            io.unlock();
        }
    }

    /** Flushes what is buffered and closes the segment. */
    @Override
    public void close() throws IOException {
        io.lock();
        try {
            flush();
            segment.close();
        } finally {
            io.unlock();
        }
    }

    private FileChannel create(long number) throws IOException {
        FileChannel created = FileChannel.open(directory.segment(number),
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        directory.sync();
        return created;
    }

    /** Caller holds io and appendMonitor: hands the filled buffer to the writer, the empty one to appenders. */
    private void swapBuffers() {
        ByteBuffer filled = filling;
        filling = writing.clear();
        writing = filled.flip();
    }

    private static void writeAll(FileChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }
}
