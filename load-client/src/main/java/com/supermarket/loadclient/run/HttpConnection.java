package com.supermarket.loadclient.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * One store's keep-alive HTTP/1.1 connection: one request at a time (a till waits for its
 * answer), reconnecting on the next request when the server closed it. Requests are written as
 * bytes straight into a pooled buffer (no request objects); responses are decoded by Netty and
 * reduced to what the client reports: the status, {@code Retry-After}, and the start of an error
 * body for the failure log.
 * <p>
 * Thread-safety: confined to its event loop; {@link #send} and {@link #abandon} must be called on
 * it, and the listener is called on it.
 */
final class HttpConnection {

    /** Receives exactly one outcome per {@link #send}, unless the request was {@link #abandon abandoned}. */
    interface Listener {
        void onResponse(int status, String retryAfter, String errorBody);

        void onFailure(Throwable error);
    }

    private static final int ERROR_BODY_CHARS = 200;
    private static final byte[] POST = "POST ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] GET = "GET ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HTTP11_HOST = " HTTP/1.1\r\nHost: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] JSON_LENGTH = "\r\nContent-Type: application/json\r\nContent-Length: "
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] IDEMPOTENCY_KEY = "\r\nIdempotency-Key: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END_OF_HEADERS = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final HttpTransport transport;
    private final EventLoop loop;
    private final byte[] host;
    private final byte[] basePath;
    private final byte[] storeAuthorization;
    private final byte[] managerAuthorization;
    private final StringBuilder errorBody = new StringBuilder(ERROR_BODY_CHARS);
    private Channel channel;
    private Listener pending;
    private String method;
    private CharSequence path;
    private CharSequence body;
    private CharSequence idempotencyKey;
    private boolean managerQuery;
    private int status;
    private String retryAfter;
    private boolean keepAlive;

    HttpConnection(HttpTransport transport, EventLoop loop) {
        this(transport, loop, null, null);
    }

    /**
     * @param storeAuthorization   the store's {@code \r\nAuthorization: ...} header line, or null for none
     * @param managerAuthorization the manager's, sent instead on a manager query, or null for none
     */
    HttpConnection(HttpTransport transport, EventLoop loop, byte[] storeAuthorization, byte[] managerAuthorization) {
        this.transport = transport;
        this.loop = loop;
        this.storeAuthorization = storeAuthorization;
        this.managerAuthorization = managerAuthorization;
        this.host = transport.hostHeader().getBytes(StandardCharsets.US_ASCII);
        this.basePath = transport.basePath().getBytes(StandardCharsets.US_ASCII);
    }

    EventLoop loop() {
        return loop;
    }

    /**
     * Sends one request; the arguments must stay unchanged until the listener is called.
     *
     * @param body           JSON body (ASCII), or null for none
     * @param idempotencyKey header value, or null for none
     */
    void send(String method, CharSequence path, CharSequence body, CharSequence idempotencyKey, Listener listener) {
        send(method, path, body, idempotencyKey, false, listener);
    }

    /** As above; {@code managerQuery} sends the manager's key instead of the store's. */
    void send(String method, CharSequence path, CharSequence body, CharSequence idempotencyKey, boolean managerQuery,
              Listener listener) {
        this.managerQuery = managerQuery;
        this.method = method;
        this.path = path;
        this.body = body;
        this.idempotencyKey = idempotencyKey;
        this.pending = listener;
        if (channel != null && channel.isActive()) {
            write(channel);
            return;
        }
        ChannelFuture connecting = transport.connect(loop, new ResponseReader());
        Channel opening = connecting.channel();
        channel = opening;
        connecting.addListener(done -> {
            if (channel != opening || pending != listener) {
                return;
            }
            if (done.isSuccess()) {
                write(opening);
            } else {
                channel = null;
                fail(done.cause());
            }
        });
    }

    /** Gives up on the request in flight (a timeout): closes the connection, the listener hears nothing more. */
    void abandon() {
        pending = null;
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }

    private void write(Channel target) {
        ByteBuf request = target.alloc().ioBuffer(256 + (body == null ? 0 : body.length()));
        request.writeBytes(method.equals("POST") ? POST : GET);
        request.writeBytes(basePath);
        ByteBufUtil.writeAscii(request, path);
        request.writeBytes(HTTP11_HOST).writeBytes(host);
        if (body != null) {
            request.writeBytes(JSON_LENGTH);
            writeDecimal(request, body.length());
        }
        byte[] authorization = managerQuery ? managerAuthorization : storeAuthorization;
        if (authorization != null) {
            request.writeBytes(authorization);
        }
        if (idempotencyKey != null) {
            request.writeBytes(IDEMPOTENCY_KEY);
            ByteBufUtil.writeAscii(request, idempotencyKey);
        }
        request.writeBytes(END_OF_HEADERS);
        if (body != null) {
            ByteBufUtil.writeAscii(request, body);
        }
        target.writeAndFlush(request, target.voidPromise());
    }

    private static void writeDecimal(ByteBuf buffer, int value) {
        if (value >= 10) {
            writeDecimal(buffer, value / 10);
        }
        buffer.writeByte('0' + value % 10);
    }

    private void fail(Throwable error) {
        Listener listener = pending;
        pending = null;
        if (listener != null) {
            listener.onFailure(error);
        }
    }

    private void complete() {
        Listener listener = pending;
        pending = null;
        if (!keepAlive && channel != null) {
            channel.close();
            channel = null;
        }
        if (listener != null) {
            listener.onResponse(status, retryAfter, errorBody.isEmpty() ? "" : errorBody.toString());
        }
    }

    /** Decoded response parts of one channel; events of a channel this connection has left are ignored. */
    private final class ResponseReader extends ChannelInboundHandlerAdapter {

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            try {
                if (ctx.channel() != channel) {
                    return;
                }
                if (message instanceof HttpObject object && object.decoderResult().isFailure()) {
                    ctx.close();
                    channel = null;
                    fail(new IOException("malformed HTTP response: " + object.decoderResult().cause()));
                    return;
                }
                if (message instanceof HttpResponse response) {
                    status = response.status().code();
                    retryAfter = response.headers().get(HttpHeaderNames.RETRY_AFTER);
                    keepAlive = HttpUtil.isKeepAlive(response);
                    errorBody.setLength(0);
                }
                if (message instanceof HttpContent content) {
                    if (status >= 300 && errorBody.length() < ERROR_BODY_CHARS && content.content().isReadable()) {
                        ByteBuf bytes = content.content();
                        int length = Math.min(bytes.readableBytes(), ERROR_BODY_CHARS - errorBody.length());
                        errorBody.append(bytes.toString(bytes.readerIndex(), length, StandardCharsets.UTF_8));
                    }
                    if (message instanceof LastHttpContent) {
                        complete();
                    }
                }
            } finally {
                ReferenceCountUtil.release(message);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (ctx.channel() == channel) {
                channel = null;
                fail(new IOException("connection closed before the response"));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
            if (ctx.channel() == channel) {
                channel = null;
                fail(cause);
            }
        }
    }
}
