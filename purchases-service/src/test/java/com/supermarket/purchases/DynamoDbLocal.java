package com.supermarket.purchases;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * DynamoDB Local 2.6.1 as an in-process server on a free port, in memory. Needs the sqlite4java
 * natives, which the build copies to {@code target/native-libs} and names in the system property
 * {@code sqlite4java.library.path}.
 */
final class DynamoDbLocal implements AutoCloseable {

    private final DynamoDBProxyServer server;
    private final int port;

    DynamoDbLocal() throws Exception {
        if (System.getProperty("sqlite4java.library.path") == null) {
            throw new IllegalStateException("sqlite4java.library.path is not set: run the tests through Maven, which copies "
                    + "the sqlite4java natives to target/native-libs and sets it");
        }
        port = freePort();
        server = ServerRunner.createServerFromCommandLineArgs(new String[] {"-inMemory", "-port", Integer.toString(port)});
        server.start();
    }

    String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
