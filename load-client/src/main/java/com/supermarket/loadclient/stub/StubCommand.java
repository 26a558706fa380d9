package com.supermarket.loadclient.stub;

import java.util.concurrent.Callable;

import com.supermarket.loadclient.netty.Transports;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stub}: a tiny HTTP/1.1 server that answers every POST with 201 and every GET with an
 * empty ranking, for measuring the load client itself (e.g. against wrk, or the cost of
 * {@code --csv}) or trying the scripts without the services ({@link StubServer}). Runs until
 * killed.
 */
@Command(name = "stub", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = "Serves a stand-in purchase API: POST -> 201, GET -> 200 {\"stores\":[]}. Runs until killed.")
public final class StubCommand implements Callable<Integer> {

    @Option(names = "--port", description = "Port to listen on (0 = any free port, printed on stdout).")
    private int port = 8080;

    @Option(names = "--bind", description = "Address to bind.")
    private String bind = "127.0.0.1";

    @Option(names = "--io-threads", paramLabel = "N", description = "Event-loop threads.")
    private int ioThreads = 1;

    @Override
    public Integer call() throws InterruptedException {
        try (StubServer server = StubServer.start(bind, port, ioThreads)) {
            System.out.println("stub listening on http://" + bind + ":" + server.port() + " (" + Transports.name() + ")");
            server.awaitClose();
            return 0;
        }
    }
}
