package com.supermarket.broker;

import com.supermarket.contract.Purchase;
import io.micrometer.tracing.Link;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import java.util.List;
import java.util.function.Function;
import org.springframework.amqp.core.MessageProperties;

/**
 * Trace context across the platform's batched messages, which Spring AMQP's own observation
 * cannot follow: one message carries many requests' work (purchases, store queries), each from
 * its own trace.
 *
 * <ul>
 * <li>A request thread notes its span's context ({@link #current}); a purchase carries it on the
 * wire as its {@link Purchase#traceparent()}.
 * <li>The message that carries a batch gets a span of its own ({@link #sending}): a child of the
 * first item's context, linked to every item's, its context in the message's W3C
 * {@code traceparent} header.
 * <li>The service that handles the message opens a span continuing that header
 * ({@link #handling}), linked to each purchase's own context, so each purchase's trace reaches
 * both consumers; the span is the current one (its trace id in the logs' MDC) while the message
 * is handled.
 * </ul>
 *
 * <p>Tracing off ({@value #ENABLED_PROPERTY} false, the services' default): every method
 * returns at once, with null or a shared no-op, so the request and consume paths allocate nothing
 * for tracing ({@link TracingSwitch} keeps Boot's tracing off the HTTP requests too).
 *
 * <p>Thread-safe: stateless apart from the thread-safe tracer and propagator.
 */
public final class MessageTracing {

    /** Spring Boot's switch of trace export and propagation; the services set it from {@code TRACING_ENABLED}. */
    public static final String ENABLED_PROPERTY = "management.tracing.export.enabled";

    /** Tracing off, as the services run without tracing (and as unit tests use it). */
    public static final MessageTracing OFF = new MessageTracing(Tracer.NOOP, Propagator.NOOP, false);

    private static final Handling NOT_TRACED = () -> {
    };

    private final Tracer tracer;
    private final Propagator propagator;
    private final boolean enabled;

    public MessageTracing(Tracer tracer, Propagator propagator, boolean enabled) {
        this.tracer = tracer;
        this.propagator = propagator;
        this.enabled = enabled;
    }

    public boolean enabled() {
        return enabled;
    }

    /** The current span's context (a request's server span, on its thread); null when off or untraced. */
    public TraceContext current() {
        if (!enabled) {
            return null;
        }
        Span span = tracer.currentSpan();
        return span == null ? null : span.context();
    }

    /** The current span's context as a W3C traceparent; null when off or untraced. */
    public String currentTraceparent() {
        TraceContext context = current();
        return context == null ? null : traceparent(context);
    }

    /** {@code context} as a version-00 W3C traceparent. */
    public static String traceparent(TraceContext context) {
        return "00-" + context.traceId() + "-" + context.spanId() + (Boolean.TRUE.equals(context.sampled()) ? "-01" : "-00");
    }

    /**
     * Starts the span of an outgoing message carrying {@code items}' work, a child of the first
     * traced item's context (a new trace when none is) and linked to each, and puts its context
     * in {@code message}'s headers. The caller ends it (when the message is settled). A no-op
     * span when off.
     *
     * @param items the items, in the message's order
     * @param trace  an item's context; null for an untraced item
     */
    public <T> Span sending(String name, Span.Kind kind, List<T> items, Function<? super T, TraceContext> trace,
                            MessageProperties message) {
        if (!enabled) {
            return Span.NOOP;
        }
        Span.Builder builder = tracer.spanBuilder().name(name).kind(kind);
        TraceContext parent = null;
        for (T each : items) {
            TraceContext item = trace.apply(each);
            if (item != null) {
                parent = parent == null ? item : parent;
                builder.addLink(new Link(item));
            }
        }
        if (parent == null) {
            builder.setNoParent();
        } else {
            builder.setParent(parent);
        }
        Span span = builder.start();
        propagator.inject(span.context(), message, MessageProperties::setHeader);
        return span;
    }

    /**
     * Opens the span of handling an incoming message, the current span until closed: a child of
     * the span in its headers (a new trace without one), linked to each traced purchase's
     * request span. A shared no-op when off.
     */
    public Handling handling(String name, Span.Kind kind, MessageProperties message, List<Purchase> purchases) {
        if (!enabled) {
            return NOT_TRACED;
        }
        Span.Builder builder = propagator.extract(message, (carrier, key) -> {
            Object value = carrier.getHeader(key);
            return value == null ? null : value.toString();
        }).name(name).kind(kind);
        for (Purchase purchase : purchases) {
            if (purchase.traceparent() != null) {
                builder.addLink(new Link(context(purchase.traceparent())));
            }
        }
        Span span = builder.start();
        Tracer.SpanInScope scope = tracer.withSpan(span);
        return () -> {
            scope.close();
            span.end();
        };
    }

    /** The context a valid {@link Purchase#traceparent()} names. */
    TraceContext context(String traceparent) {
        int flags = Integer.parseInt(traceparent, 53, 55, 16);
        return tracer.traceContextBuilder().traceId(traceparent.substring(3, 35)).spanId(traceparent.substring(36, 52))
                .sampled((flags & 1) == 1).build();
    }

    /** A message's handling span in scope; {@link #close} ends both. */
    @FunctionalInterface
    public interface Handling extends AutoCloseable {
        @Override
        void close();
    }
}
