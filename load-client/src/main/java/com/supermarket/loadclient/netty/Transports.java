package com.supermarket.loadclient.netty;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/**
 * The Netty transport the client and the stub use: native epoll where it loads (Linux x86_64,
 * fewer copies and system calls than NIO), NIO elsewhere. Stateless.
 */
public final class Transports {

    private static final boolean EPOLL = Epoll.isAvailable();

    private Transports() {
    }

    /** {@code threads} event loops, daemon threads named {@code prefix1, prefix2, ...}. */
    public static EventLoopGroup eventLoops(int threads, String prefix) {
        return new MultiThreadIoEventLoopGroup(threads, Thread.ofPlatform().name(prefix, 1).daemon().factory(),
                EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    public static Class<? extends SocketChannel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** "epoll" or "nio", for the summary. */
    public static String name() {
        return EPOLL ? "epoll" : "nio";
    }
}
