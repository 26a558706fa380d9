package com.supermarket.api.testing;

import com.supermarket.contract.testing.TcpProxy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * The local Redis the idempotency tests use ({@code REDIS_HOST}/{@code REDIS_PORT}, default
 * 127.0.0.1:6379; database 5), reached through a {@link TcpProxy} so that a test can cut or
 * freeze the link. Fails, never skips, when Redis cannot be reached: start it with
 * {@code scripts/local-services.sh}.
 */
public final class TestRedis {

    public static final String HOST = env("REDIS_HOST", "127.0.0.1");
    public static final int PORT = Integer.parseInt(env("REDIS_PORT", "6379"));
    public static final int DATABASE = 5;

    private TestRedis() {
    }

    /** A new proxy to the local Redis. */
    public static TcpProxy link() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, PORT), 2000);
        } catch (IOException e) {
            throw new IllegalStateException("no Redis at " + HOST + ":" + PORT
                    + " (start it with scripts/local-services.sh, or set REDIS_HOST/REDIS_PORT)", e);
        }
        return new TcpProxy(HOST, PORT);
    }

    /** The URL of the test database through {@code link}. */
    public static String url(TcpProxy link) {
        return "redis://" + link.host() + ":" + link.port() + "/" + DATABASE;
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
