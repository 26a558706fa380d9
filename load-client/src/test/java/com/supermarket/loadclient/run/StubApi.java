package com.supermarket.loadclient.run;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/** A stand-in purchase API on a random port that records every request and lets the test choose the answer. */
final class StubApi implements AutoCloseable {

    record Request(int index, String method, String path, String body, String idempotencyKey, long arrivedNanos,
                   String authorization) {
    }

    /** Decides the status of a request; may block to hold the client back. */
    interface Responder {
        int status(Request request) throws InterruptedException;
    }

    private final HttpServer server;
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();
    private final AtomicInteger arrivals = new AtomicInteger();
    private volatile boolean closeEachConnection;

    StubApi(Responder responder) throws IOException {
        this(responder, null);
    }

    /** @param retryAfter the {@code Retry-After} value sent with every 503, or null for none */
    StubApi(Responder responder, String retryAfter) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", exchange -> {
            try (exchange) {
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                Request request = new Request(arrivals.getAndIncrement(), exchange.getRequestMethod(),
                        exchange.getRequestURI().getPath(), body,
                        exchange.getRequestHeaders().getFirst("Idempotency-Key"), System.nanoTime(),
                        exchange.getRequestHeaders().getFirst("Authorization"));
                requests.add(request);
                int status;
                try {
                    status = responder.status(request);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    status = 500;
                }
                if (closeEachConnection) {
                    exchange.getResponseHeaders().set("Connection", "close");
                }
                if (status == 503 && retryAfter != null) {
                    exchange.getResponseHeaders().set("Retry-After", retryAfter);
                }
                byte[] answer = (status >= 400 ? "{\"message\":\"stub says no\"}" : "{}").getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(status, answer.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(answer);
                }
            }
        });
        server.start();
    }

    /** Answers with {@code Connection: close} from now on, so every request needs a new connection. */
    StubApi closingEachConnection() {
        closeEachConnection = true;
        return this;
    }

    URI baseUrl() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
