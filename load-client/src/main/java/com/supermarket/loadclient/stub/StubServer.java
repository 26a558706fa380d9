package com.supermarket.loadclient.stub;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

import com.supermarket.loadclient.netty.Transports;

/**
 * A tiny HTTP/1.1 server that answers every POST with 201 and every GET with an empty ranking:
 * Netty event loops writing prepared bytes, so it costs less per request than the client it
 * serves. Behind {@code stub}, and the load client's own warm-up. Thread-safety: one handler per
 * connection, confined to its loop; the answers are shared read-only buffers.
 */
public final class StubServer implements AutoCloseable {

    private static final ByteBuf CREATED = answer("201 Created", "{}", true);
    private static final ByteBuf CREATED_CLOSE = answer("201 Created", "{}", false);
    private static final ByteBuf RANKING = answer("200 OK", "{\"stores\":[]}", true);
    private static final ByteBuf RANKING_CLOSE = answer("200 OK", "{\"stores\":[]}", false);

    private final EventLoopGroup loops;
    private final Channel server;

    private StubServer(EventLoopGroup loops, Channel server) {
        this.loops = loops;
        this.server = server;
    }

    /** Listens on {@code bind}:{@code port} (0: any free port) with {@code ioThreads} event loops. */
    public static StubServer start(String bind, int port, int ioThreads) throws InterruptedException {
        EventLoopGroup loops = Transports.eventLoops(ioThreads, "stub-");
        try {
            Channel server = new ServerBootstrap()
                    .group(loops)
                    .channel(Transports.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new HttpRequestDecoder(), new Answerer());
                        }
                    })
                    .bind(new InetSocketAddress(bind, port)).sync().channel();
            return new StubServer(loops, server);
        } catch (InterruptedException | RuntimeException e) {
            loops.shutdownGracefully();
            throw e;
        }
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** Blocks until the server is closed (or the thread interrupted). */
    void awaitClose() throws InterruptedException {
        server.closeFuture().sync();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        loops.shutdownGracefully();
    }

    private static ByteBuf answer(String status, String body, boolean keepAlive) {
        String head = "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length()
                + (keepAlive ? "" : "\r\nConnection: close") + "\r\n\r\n";
        return Unpooled.unreleasableBuffer(Unpooled.directBuffer().writeBytes((head + body).getBytes(StandardCharsets.US_ASCII)))
                .asReadOnly();
    }

    /** Answers each request once its body is read; flushes once per read batch. */
    private static final class Answerer extends ChannelInboundHandlerAdapter {

        private boolean post;
        private boolean keepAlive;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            try {
                if (message instanceof HttpRequest request) {
                    post = HttpMethod.POST.equals(request.method());
                    keepAlive = HttpUtil.isKeepAlive(request);
                }
                if (message instanceof LastHttpContent) {
                    ByteBuf answer = post ? (keepAlive ? CREATED : CREATED_CLOSE) : (keepAlive ? RANKING : RANKING_CLOSE);
                    if (keepAlive) {
                        ctx.write(answer.duplicate(), ctx.voidPromise());
                    } else {
                        ctx.writeAndFlush(answer.duplicate()).addListener(ChannelFutureListener.CLOSE);
                    }
                }
            } finally {
                ReferenceCountUtil.release(message);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
