package com.supermarket.contract.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy in front of a real service, for fault injection in integration tests: the
 * application under test talks to {@link #port()}, and the test cuts the link
 * ({@link #disconnect()}: open connections are reset and new ones refused, as when a broker or
 * a database dies) or freezes it ({@link #freeze()}: bytes stop flowing, as on a network
 * partition), then {@link #restore()}s it. Thread-safe.
 */
public final class TcpProxy implements AutoCloseable {

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean connected = true;
    private volatile boolean frozen;
    private volatile boolean closed;

    public TcpProxy(String targetHost, int targetPort) {
        this.target = new InetSocketAddress(targetHost, targetPort);
        try {
            this.server = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException(e);
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
        sockets.forEach(TcpProxy::closeQuietly);
        sockets.clear();
    }

    /** Stops forwarding bytes on existing and new connections, without closing them. */
    public void freeze() {
        frozen = true;
    }

    /** Lets connections through again. */
    public void restore() {
        frozen = false;
        connected = true;
        synchronized (this) {
            notifyAll();
        }
    }

    @Override
    public void close() {
        closed = true;
        disconnect();
        closeQuietly(server);
        restore();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (!connected) {
                    client.setSoLinger(true, 0);
                    client.close();
                    continue;
                }
                Socket upstream = new Socket();
                upstream.connect(target, 2000);
                sockets.add(client);
                sockets.add(upstream);
                Thread.ofVirtual().start(() -> pump(client, upstream));
                Thread.ofVirtual().start(() -> pump(upstream, client));
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16384];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                awaitThaw();
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the link was cut, by the test or by either end
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            sockets.remove(from);
            sockets.remove(to);
        }
    }

    private synchronized void awaitThaw() throws InterruptedException {
        while (frozen && !closed) {
            wait(100);
        }
    }

    private static void closeQuietly(java.io.Closeable closeable) {
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
