package com.supermarket.loadclient.stub;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stub}: a tiny HTTP server that answers every POST with 201 and every GET with an empty
 * ranking, for measuring the load client itself (e.g. the cost of {@code --csv}) or trying the
 * scripts without the services. Runs until killed. Thread-safety: one virtual thread per exchange,
 * no shared state.
 */
@Command(name = "stub", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = "Serves a stand-in purchase API: POST -> 201, GET -> 200 {\"stores\":[]}. Runs until killed.")
public final class StubCommand implements Callable<Integer> {

    private static final byte[] CREATED = "{}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] EMPTY_RANKING = "{\"stores\":[]}".getBytes(StandardCharsets.UTF_8);

    @Option(names = "--port", description = "Port to listen on (0 = any free port, printed on stdout).")
    private int port = 8080;

    @Option(names = "--bind", description = "Address to bind.")
    private String bind = "127.0.0.1";

    @Override
    public Integer call() throws IOException, InterruptedException {
        // The JDK server closes idle keep-alive connections beyond 200 by default, racing the
        // client's next request on them; a load test keeps one connection per store open.
        System.setProperty("sun.net.httpserver.maxIdleConnections", "65536");
        HttpServer server = HttpServer.create(new InetSocketAddress(bind, port), 1024);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", StubCommand::answer);
        server.start();
        System.out.println("stub listening on http://" + bind + ":" + server.getAddress().getPort());
        new CountDownLatch(1).await();
        return 0;
    }

    private static void answer(HttpExchange exchange) throws IOException {
        try (exchange; InputStream in = exchange.getRequestBody()) {
            in.readAllBytes();
            boolean post = "POST".equals(exchange.getRequestMethod());
            byte[] body = post ? CREATED : EMPTY_RANKING;
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(post ? 201 : 200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
