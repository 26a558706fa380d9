package com.supermarket.api.testing;

import com.supermarket.broker.testing.TestServices;
import com.supermarket.tools.proxy.TcpProxy;

/**
 * The Redis the idempotency tests use ({@link TestServices#redis()}; database 5), reached through
 * a {@link TcpProxy} so that a test can cut or freeze the link. Fails, never skips, when Redis
 * cannot be had.
 */
public final class TestRedis {

    public static final int DATABASE = 5;

    private TestRedis() {
    }

    /** A new proxy to the test Redis. */
    public static TcpProxy link() {
        TestServices.Redis redis = TestServices.redis();
        return new TcpProxy(redis.host(), redis.port());
    }

    /** The URL of the test database straight on the test Redis, with no proxy between. */
    public static String directUrl() {
        TestServices.Redis redis = TestServices.redis();
        return "redis://" + redis.host() + ":" + redis.port() + "/" + DATABASE;
    }

    /** The URL of the test database through {@code link}. */
    public static String url(TcpProxy link) {
        return "redis://" + link.host() + ":" + link.port() + "/" + DATABASE;
    }
}
