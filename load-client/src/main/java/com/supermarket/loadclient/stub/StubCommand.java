package com.supermarket.loadclient.stub;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

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

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stub}: a tiny HTTP/1.1 server that answers every POST with 201 and every GET with an
 * empty ranking, for measuring the load client itself (e.g. against wrk, or the cost of
 * {@code --csv}) or trying the scripts without the services. Netty event loops writing
 * prepared bytes, so the stub costs less per request than the client it measures. Runs until
 * killed. Thread-safety: one handler per connection, confined to its loop; the answers are
 * shared read-only buffers.
 */
@Command(name = "stub", mixinStandardHelpOptions = true, showDefaultValues = true,
        description = "Serves a stand-in purchase API: POST -> 201, GET -> 200 {\"stores\":[]}. Runs until killed.")
public final class StubCommand implements Callable<Integer> {

    private static final ByteBuf CREATED = answer("201 Created", "{}", true);
    private static final ByteBuf CREATED_CLOSE = answer("201 Created", "{}", false);
    private static final ByteBuf RANKING = answer("200 OK", "{\"stores\":[]}", true);
    private static final ByteBuf RANKING_CLOSE = answer("200 OK", "{\"stores\":[]}", false);

    @Option(names = "--port", description = "Port to listen on (0 = any free port, printed on stdout).")
    private int port = 8080;

    @Option(names = "--bind", description = "Address to bind.")
    private String bind = "127.0.0.1";

    @Option(names = "--io-threads", paramLabel = "N", description = "Event-loop threads.")
    private int ioThreads = 1;

    @Override
    public Integer call() throws InterruptedException {
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
            System.out.println("stub listening on http://" + bind + ":"
                    + ((InetSocketAddress) server.localAddress()).getPort() + " (" + Transports.name() + ")");
            server.closeFuture().sync();
            return 0;
        } finally {
            loops.shutdownGracefully();
        }
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
