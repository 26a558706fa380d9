package com.supermarket.tools.proxy;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy in front of a real service, for fault injection: the application under test
 * talks to {@link #port()} instead of the service, and the proxy's owner (an integration test,
 * or {@link FaultProxy} driven by {@code scripts/faults.sh}) breaks the link on purpose:
 * <ul>
 *   <li>{@link #disconnect()} resets every open connection and refuses new ones until
 *       {@link #restore()}; {@link #cut(Duration)} does the same for a while and then lets
 *       connections in again by itself. To the application that is a broker restart or a
 *       database outage, without touching the shared service behind the proxy.</li>
 *   <li>{@link #freeze()} stops the bytes on existing and new connections without closing them,
 *       as a network partition does.</li>
 *   <li>{@link #freezeOpenConnections()} stops the bytes on the connections open now only, for
 *       good, while new connections go through: a dead link (a peer gone without a reset, a lost
 *       NAT entry) that only a client which drops it and connects again gets past.</li>
 *   <li>{@link #latency(Duration)} holds every chunk of bytes that long, each way.</li>
 *   <li>{@link #loss(double)}: packet loss as TCP's users see it. TCP retransmits a lost
 *       segment, so no byte is ever lost or reordered on the connection; the stream stalls until
 *       the retransmission arrives and everything behind the lost segment waits too
 *       (head-of-line blocking). So each chunk the proxy forwards is, with this probability,
 *       held for {@link #RETRANSMISSION_TIMEOUT} (Linux's minimum retransmission timeout) and
 *       the chunks behind it on that direction wait behind it. A chunk is what one read
 *       returned, usually one or a few segments, so the fraction is of chunks, not of IP
 *       packets.</li>
 * </ul>
 * Delayed chunks keep their order and are written by a second thread per direction, so a
 * delayed link still carries many requests in flight (it adds latency, not a throughput cap).
 * Thread-safe: every setting may change while connections run, and applies from the next chunk.
 */
public final class TcpProxy implements AutoCloseable {

    /** How long a "lost" chunk is held: the minimum retransmission timeout of Linux's TCP. */
    public static final Duration RETRANSMISSION_TIMEOUT = Duration.ofMillis(200);
    private static final int CHUNKS_IN_FLIGHT = 256;

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean connected = true;
    private volatile long refuseUntilNanos;
    private volatile boolean frozen;
    /** Connections numbered up to this one are frozen ({@link #freezeOpenConnections()}); -1: none. */
    private volatile long frozenThrough = -1;
    private final AtomicLong opened = new AtomicLong();
    private volatile long latencyNanos;
    private volatile double lossFraction;
    private volatile boolean closed;

    /** A proxy on a free loopback port. */
    public TcpProxy(String targetHost, int targetPort) {
        this(targetHost, targetPort, 0);
    }

    /** A proxy on the given loopback port ({@code 0}: a free one). */
    public TcpProxy(String targetHost, int targetPort, int listenPort) {
        this.target = new InetSocketAddress(targetHost, targetPort);
        try {
            this.server = new ServerSocket(listenPort, 512, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on port " + listenPort, e);
        }
        Thread.ofVirtual().name("tcp-proxy-accept-" + server.getLocalPort()).start(this::acceptLoop);
    }

    public int port() {
        return server.getLocalPort();
    }

    public String host() {
        return server.getInetAddress().getHostAddress();
    }

    /** Resets every open connection and refuses new ones until {@link #restore()}. */
    public void disconnect() {
        connected = false;
        resetConnections();
    }

    /**
     * Resets every open connection and refuses new ones for {@code duration}, then accepts them
     * again by itself ({@link Duration#ZERO}: only resets what is open). Latency, loss and a
     * freeze stay as they are.
     */
    public void cut(Duration duration) {
        refuseUntilNanos = System.nanoTime() + duration.toNanos();
        resetConnections();
    }

    /** Stops forwarding bytes on existing and new connections, without closing them. */
    public void freeze() {
        frozen = true;
    }

    /**
     * Stops forwarding bytes on the connections open now, without closing them, until
     * {@link #restore()}; connections opened afterwards are not touched.
     */
    public void freezeOpenConnections() {
        frozenThrough = opened.get();
    }

    /** Holds every chunk this long before forwarding it, in each direction. */
    public void latency(Duration latency) {
        latencyNanos = latency.toNanos();
    }

    /** Holds this fraction (0..1) of chunks for a retransmission timeout (see the class comment). */
    public void loss(double fraction) {
        if (fraction < 0 || fraction > 1) {
            throw new IllegalArgumentException("loss must be within 0..1: " + fraction);
        }
        lossFraction = fraction;
    }

    /** Lets connections through again, undelayed: ends a disconnect, cut, freeze, latency and loss. */
    public void restore() {
        latencyNanos = 0;
        lossFraction = 0;
        refuseUntilNanos = System.nanoTime();
        frozen = false;
        frozenThrough = -1;
        connected = true;
        synchronized (this) {
            notifyAll();
        }
    }

    /** The open connections (each counted once, not per socket). */
    public int openConnections() {
        return sockets.size() / 2;
    }

    /** What the proxy does now, in words, e.g. {@code "connected latency=50ms loss=0.05"}. */
    public String describe() {
        long refusingMillis = TimeUnit.NANOSECONDS.toMillis(refuseUntilNanos - System.nanoTime());
        StringBuilder state = new StringBuilder(!connected ? "disconnected"
                : refusingMillis > 0 ? "cut(" + refusingMillis + "ms left)" : "connected");
        if (frozen) {
            state.append(" frozen");
        } else if (frozenThrough >= 0) {
            state.append(" frozen-open");
        }
        state.append(" latency=").append(TimeUnit.NANOSECONDS.toMillis(latencyNanos)).append("ms")
                .append(" loss=").append(lossFraction)
                .append(" connections=").append(openConnections());
        return state.toString();
    }

    @Override
    public void close() {
        closed = true;
        disconnect();
        closeQuietly(server);
        restore();
    }

    private boolean refusing() {
        return !connected || System.nanoTime() - refuseUntilNanos < 0;
    }

    private void resetConnections() {
        sockets.forEach(TcpProxy::closeQuietly);
        sockets.clear();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (refusing()) {
                    closeQuietly(client);
                    continue;
                }
                Thread.ofVirtual().start(() -> open(client));
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void open(Socket client) {
        Socket upstream = new Socket();
        try {
            upstream.connect(target, 2000);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(upstream);
            return;
        }
        sockets.add(client);
        sockets.add(upstream);
        if (refusing()) { // cut while this connection was being opened
            closeQuietly(client);
            closeQuietly(upstream);
        }
        long ordinal = opened.incrementAndGet();
        new Direction(client, upstream, ordinal).start();
        new Direction(upstream, client, ordinal).start();
    }

    /** A chunk of bytes read from one end, and when it may be written to the other. */
    private record Chunk(byte[] bytes, long dueNanos) {
    }

    /** One way of one connection: a reader that stamps each chunk with its due time, a writer. */
    private final class Direction {
        private static final Chunk END = new Chunk(new byte[0], 0);
        private final Socket from;
        private final Socket to;
        private final long ordinal;
        private final BlockingQueue<Chunk> chunks = new ArrayBlockingQueue<>(CHUNKS_IN_FLIGHT);
        private long lastDue; // the reader's only

        Direction(Socket from, Socket to, long ordinal) {
            this.from = from;
            this.to = to;
            this.ordinal = ordinal;
        }

        void start() {
            Thread.ofVirtual().start(this::read);
            Thread.ofVirtual().start(this::write);
        }

        private void read() {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    enqueue(Arrays.copyOf(buffer, n));
                }
            } catch (IOException | InterruptedException e) {
                // the link was cut, by the owner or by either end
            } finally {
                try {
                    enqueue(null);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void enqueue(byte[] bytes) throws InterruptedException {
            Chunk chunk = END;
            if (bytes != null) {
                long due = System.nanoTime() + latencyNanos;
                double loss = lossFraction;
                if (loss > 0 && ThreadLocalRandom.current().nextDouble() < loss) {
                    due += RETRANSMISSION_TIMEOUT.toNanos();
                }
                // In order, as TCP delivers: nothing overtakes a held chunk.
                lastDue = Math.max(due, lastDue);
                chunk = new Chunk(bytes, lastDue);
            }
            while (!chunks.offer(chunk, 100, TimeUnit.MILLISECONDS)) {
                if (to.isClosed()) {
                    return;
                }
            }
        }

        private void write() {
            try (OutputStream out = to.getOutputStream()) {
                for (Chunk chunk = chunks.take(); chunk != END; chunk = chunks.take()) {
                    for (long wait; (wait = chunk.dueNanos() - System.nanoTime()) > 0; ) {
                        LockSupport.parkNanos(wait);
                    }
                    if (frozen(ordinal)) {
                        awaitThaw(ordinal);
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the link was cut, by the owner or by either end
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }
    }

    private boolean frozen(long ordinal) {
        return frozen || ordinal <= frozenThrough;
    }

    private synchronized void awaitThaw(long ordinal) throws InterruptedException {
        while (frozen(ordinal) && !closed) {
            wait(100);
        }
    }

    private static void closeQuietly(Closeable closeable) {
        try {
            if (closeable instanceof Socket socket && !socket.isClosed()) {
                socket.setSoLinger(true, 0);
            }
            closeable.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
