package com.supermarket.loadclient.run;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLException;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.EventExecutor;

import com.supermarket.loadclient.netty.Transports;

/**
 * The client's network: a few Netty event loops ({@link Transports}) that
 * carry every store's keep-alive HTTP/1.1 connection, as wrk's threads do. A store is pinned to
 * one loop, so its connection, timers and bookkeeping all run on one thread.
 * <p>
 * Thread-safety: {@link #connect} may be called from any loop; {@link #close} once, at the end.
 */
final class HttpTransport implements AutoCloseable {

    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    private final SslContext ssl;
    private final String host;
    private final int port;
    private final String hostHeader;
    private final String basePath;

    HttpTransport(URI baseUrl, int ioThreads, Duration connectTimeout) {
        boolean https = "https".equalsIgnoreCase(baseUrl.getScheme());
        this.host = baseUrl.getHost();
        this.port = baseUrl.getPort() >= 0 ? baseUrl.getPort() : https ? 443 : 80;
        this.hostHeader = baseUrl.getPort() >= 0 ? host + ":" + port : host;
        String path = baseUrl.getRawPath() == null ? "" : baseUrl.getRawPath();
        this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        try {
            this.ssl = https ? SslContextBuilder.forClient().build() : null;
        } catch (SSLException e) {
            throw new IllegalStateException("cannot set up TLS for " + baseUrl, e);
        }
        this.group = Transports.eventLoops(ioThreads, "io-");
        this.bootstrap = new Bootstrap()
                .channel(Transports.socketChannel())
                .remoteAddress(new InetSocketAddress(host, port))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeout.toMillis());
    }

    /** The event loops, in a fixed order (store i runs on loop i mod n). */
    List<EventLoop> loops() {
        List<EventLoop> loops = new ArrayList<>();
        for (EventExecutor executor : group) {
            loops.add((EventLoop) executor);
        }
        return loops;
    }

    /** Opens a connection on {@code loop} whose decoded responses go to {@code handler}. */
    ChannelFuture connect(EventLoop loop, ChannelHandler handler) {
        return bootstrap.clone(loop).handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel channel) {
                if (ssl != null) {
                    channel.pipeline().addLast(ssl.newHandler(channel.alloc(), host, port));
                }
                channel.pipeline().addLast(new HttpResponseDecoder(), handler);
            }
        }).connect();
    }

    /** The {@code Host} header value. */
    String hostHeader() {
        return hostHeader;
    }

    /** The base URL's path without a trailing slash ("" for none), put before every request path. */
    String basePath() {
        return basePath;
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
