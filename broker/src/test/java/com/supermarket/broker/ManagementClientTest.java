package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The management API client against a listener that closes its first connection without an
 * answer, as the management listener does to a kept-alive connection it retires while a request
 * is on its way.
 */
class ManagementClientTest {

    @Test
    void anIdempotentRequestWhoseConnectionClosedUnansweredIsSentOnceMore() throws Exception {
        try (ClosesFirstConnection listener = new ClosesFirstConnection()) {
            ManagementClient client = new ManagementClient(listener.uri(), "u", "p");

            assertThat(new String(client.send("GET", "api/overview", null), StandardCharsets.UTF_8)).isEqualTo("{}");
            assertThat(listener.connections.get()).isEqualTo(2);
        }
    }

    @Test
    void aPostIsNotSentTwice() throws Exception {
        try (ClosesFirstConnection listener = new ClosesFirstConnection()) {
            ManagementClient client = new ManagementClient(listener.uri(), "u", "p");

            assertThatThrownBy(() -> client.send("POST", "api/definitions", "{}".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(ManagementClient.ManagementApiException.class);
            assertThat(listener.connections.get()).isEqualTo(1);
        }
    }

    /** Accepts connections on a free port: closes the first after reading a request, answers 200 {} on the others. */
    private static final class ClosesFirstConnection implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0);
        private final AtomicInteger connections = new AtomicInteger();
        private final Thread acceptor = Thread.ofVirtual().start(this::serve);

        ClosesFirstConnection() throws IOException {
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getLocalPort());
        }

        private void serve() {
            while (!server.isClosed()) {
                try (Socket socket = server.accept()) {
                    readHead(socket.getInputStream());
                    if (connections.incrementAndGet() > 1) {
                        socket.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                                .getBytes(StandardCharsets.US_ASCII));
                    }
                } catch (IOException closed) {
                    return;
                }
            }
        }

        /** Reads up to the blank line that ends a request's head (the bodies here are tiny and come with it). */
        private static void readHead(InputStream in) throws IOException {
            int matched = 0;
            byte[] end = {'\r', '\n', '\r', '\n'};
            for (int b = in.read(); b >= 0; b = in.read()) {
                matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
                if (matched == end.length) {
                    return;
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            acceptor.interrupt();
        }
    }
}
