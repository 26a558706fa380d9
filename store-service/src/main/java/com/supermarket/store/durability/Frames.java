package com.supermarket.store.durability;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The record framing shared by the write-ahead log and the snapshots: {@code int length},
 * {@code length} payload bytes, {@code int crc}, where the CRC32C covers the length and the
 * payload (big-endian throughout). A record whose length is impossible, that runs past the end
 * of the file, or whose CRC does not match ends the valid part of a file: a crash can only tear
 * the record being written last, and a flipped bit anywhere is caught by its record's CRC; a
 * damaged record with valid ones after it ({@link #nextValidFrame}) is therefore not a tear.
 *
 * <p>Stateless; thread-safe.
 */
final class Frames {

    /** Bytes a frame adds to its payload: the length before and the CRC after. */
    static final int OVERHEAD = 8;

    /** Larger payloads are taken for a torn or garbled length (a snapshot row is 400 KB at 100,000 items). */
    static final int MAX_PAYLOAD = 1 << 28;

    private Frames() {
    }

    /** A buffer for one frame whose payload is written from position 4 on; {@link #seal} finishes it. */
    static ByteBuffer open(int payloadLength) {
        ByteBuffer frame = ByteBuffer.allocate(payloadLength + OVERHEAD);
        frame.position(Integer.BYTES);
        return frame;
    }

    /** Writes the length and the CRC around the payload written so far and flips the buffer for reading. */
    static ByteBuffer seal(ByteBuffer frame) {
        int payloadLength = frame.position() - Integer.BYTES;
        frame.putInt(0, payloadLength);
        CRC32C crc = new CRC32C();
        crc.update(frame.array(), frame.arrayOffset(), frame.position());
        frame.putInt((int) crc.getValue());
        return frame.flip();
    }

    /** Receives the payload of each valid frame, positioned at its first byte. */
    @FunctionalInterface
    interface PayloadHandler {
        void accept(ByteBuffer payload, long frameStart) throws IOException;
    }

    /**
     * Where reading a file stopped.
     *
     * @param validEnd  the byte after the last valid frame
     * @param fileSize  the file's length
     * @param problem   why reading stopped before {@code fileSize}, or null if every byte was valid
     */
    record Scan(long validEnd, long fileSize, String problem) {

        boolean clean() {
            return problem == null;
        }
    }

    /**
     * Reads every valid frame of {@code file} in order and hands its payload to {@code handler};
     * stops at the end or at the first frame that is short, has an impossible length or a bad
     * CRC, and says where and why.
     */
    static Scan scan(Path file, PayloadHandler handler) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            ByteBuffer header = ByteBuffer.allocate(Integer.BYTES);
            ByteBuffer payload = ByteBuffer.allocate(0);
            CRC32C crc = new CRC32C();
            long position = 0;
            while (position < size) {
                if (size - position < OVERHEAD) {
                    return new Scan(position, size, "a torn frame of " + (size - position) + " bytes at the end");
                }
                header.clear();
                readFully(channel, header, position);
                int length = header.getInt(0);
                if (length < 0 || length > MAX_PAYLOAD) {
                    return new Scan(position, size, "an impossible frame length " + length + " at byte " + position);
                }
                if (size - position < (long) length + OVERHEAD) {
                    return new Scan(position, size, "a frame of " + length + " bytes at byte " + position
                            + " cut short by the end of the file");
                }
                if (payload.capacity() < length + Integer.BYTES) {
                    payload = ByteBuffer.allocate(length + Integer.BYTES);
                }
                payload.clear().limit(length + Integer.BYTES);
                readFully(channel, payload, position + Integer.BYTES);
                crc.reset();
                crc.update(header.array(), 0, Integer.BYTES);
                crc.update(payload.array(), 0, length);
                if ((int) crc.getValue() != payload.getInt(length)) {
                    return new Scan(position, size, "a CRC mismatch in the frame at byte " + position);
                }
                payload.position(0).limit(length);
                handler.accept(payload, position);
                position += length + OVERHEAD;
            }
            return new Scan(position, size, null);
        }
    }

    /**
     * The start of the first valid frame (plausible length, inside the file, matching CRC) at
     * {@code from} or after it, or -1 if there is none: whether a damaged frame is the end of
     * what was written or has valid frames after it. Any byte may start a frame here, since the
     * damaged frame's length cannot be trusted; zeros never form one (the CRC of a zero length is
     * not zero), and a random match is a 2^-32 chance per candidate. Reads at most the first
     * 2 GiB from {@code from}.
     */
    static long nextValidFrame(Path file, long from) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size - from < OVERHEAD) {
                return -1;
            }
            ByteBuffer rest = channel.map(FileChannel.MapMode.READ_ONLY, from, Math.min(size - from, Integer.MAX_VALUE));
            CRC32C crc = new CRC32C();
            for (int start = 0; start <= rest.limit() - OVERHEAD; start++) {
                int length = rest.getInt(start);
                if (length < 0 || length > rest.limit() - start - OVERHEAD) {
                    continue;
                }
                crc.reset();
                crc.update(rest.slice(start, Integer.BYTES + length));
                if ((int) crc.getValue() == rest.getInt(start + Integer.BYTES + length)) {
                    return from + start;
                }
            }
            return -1;
        }
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, position);
            if (read < 0) {
                throw new IOException("unexpected end of file");
            }
            position += read;
        }
        buffer.flip();
    }
}
