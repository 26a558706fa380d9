package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.MessageProperties;

/** {@link MessageTracing} over the OpenTelemetry bridge the services run, its ended spans collected. */
class MessageTracingTest {

    private final List<SpanData> ended = new CopyOnWriteArrayList<>();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(new SpanExporter() {
                @Override
                public CompletableResultCode export(Collection<SpanData> spans) {
                    ended.addAll(spans);
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode flush() {
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode shutdown() {
                    return CompletableResultCode.ofSuccess();
                }
            })).build();
    private final io.opentelemetry.api.trace.Tracer otel = provider.get("test");
    private final Tracer tracer = new OtelTracer(otel, new OtelCurrentTraceContext(), event -> {
    });
    private final MessageTracing tracing = new MessageTracing(tracer,
            new OtelPropagator(ContextPropagators.create(W3CTraceContextPropagator.getInstance()), otel), true);

    @AfterEach
    void closeProvider() {
        provider.close();
    }

    @Test
    void aBatchsSpanIsAChildOfItsFirstTracedItemLinkedToEveryOneAndTravelsInTheHeaders() {
        TraceContext first = request();
        TraceContext second = request();
        MessageProperties message = new MessageProperties();

        tracing.sending("publish", Span.Kind.PRODUCER, Arrays.asList(null, first, second), context -> context, message).end();

        SpanData publish = endedNamed("publish");
        assertThat(publish.getTraceId()).isEqualTo(first.traceId());
        assertThat(publish.getParentSpanId()).isEqualTo(first.spanId());
        assertThat(publish.getKind()).isEqualTo(io.opentelemetry.api.trace.SpanKind.PRODUCER);
        assertThat(publish.getLinks()).extracting(link -> link.getSpanContext().getSpanId())
                .containsExactly(first.spanId(), second.spanId());
        assertThat((String) message.getHeader("traceparent")).as("W3C, sampled")
                .matches("00-" + publish.getTraceId() + "-" + publish.getSpanId() + "-0[13]");
    }

    @Test
    void aBatchOfUntracedItemsStartsATraceOfItsOwn() {
        tracing.sending("publish", Span.Kind.PRODUCER, Arrays.asList((TraceContext) null), context -> context,
                new MessageProperties()).end();

        assertThat(endedNamed("publish").getParentSpanContext().isValid()).isFalse();
    }

    @Test
    void handlingAMessageContinuesItsHeadersAndLinksEachTracedPurchaseWhileItIsTheCurrentSpan() {
        TraceContext publish = request();
        TraceContext request = request();
        MessageProperties message = new MessageProperties();
        message.setHeader("traceparent", MessageTracing.traceparent(publish));
        List<Purchase> purchases = List.of(purchase(MessageTracing.traceparent(request)), purchase(null));

        String current;
        try (MessageTracing.Handling handling = tracing.handling("consume", Span.Kind.CONSUMER, message, purchases)) {
            current = tracer.currentSpan().context().traceId();
        }

        SpanData consume = endedNamed("consume");
        assertThat(current).isEqualTo(publish.traceId()).isEqualTo(consume.getTraceId());
        assertThat(consume.getParentSpanId()).isEqualTo(publish.spanId());
        assertThat(consume.getLinks()).extracting(LinkData::getSpanContext)
                .singleElement().satisfies(linked -> {
                    assertThat(linked.getTraceId()).isEqualTo(request.traceId());
                    assertThat(linked.getSpanId()).isEqualTo(request.spanId());
                    assertThat(linked.isSampled()).isTrue();
                });
        assertThat(tracer.currentSpan()).as("out of scope once closed").isNull();
    }

    @Test
    void aRequestsTraceparentIsOneAPurchaseCarries() {
        TraceContext request = request();

        String traceparent;
        Span span = tracer.nextSpan().name("request").start();
        try (Tracer.SpanInScope scope = tracer.withSpan(span)) {
            traceparent = tracing.currentTraceparent();
        } finally {
            span.end();
        }

        assertThat(purchase(traceparent).traceparent()).isEqualTo(traceparent)
                .isEqualTo("00-" + span.context().traceId() + "-" + span.context().spanId() + "-01");
        assertThat(purchase(MessageTracing.traceparent(request)).traceparent()).isNotNull();
        assertThat(tracing.currentTraceparent()).as("no current span").isNull();
    }

    @Test
    void offItTracesNothingAndAllocatesNoScope() {
        MessageProperties message = new MessageProperties();

        assertThat(MessageTracing.OFF.sending("publish", Span.Kind.PRODUCER, List.of(request()), context -> context, message))
                .isSameAs(Span.NOOP);
        assertThat(MessageTracing.OFF.handling("consume", Span.Kind.CONSUMER, message, List.of()))
                .isSameAs(MessageTracing.OFF.handling("consume", Span.Kind.CONSUMER, message, List.of()));
        assertThat(MessageTracing.OFF.current()).isNull();
        assertThat(message.getHeaders()).isEmpty();
    }

    /** A finished request span's context. */
    private TraceContext request() {
        Span span = tracer.nextSpan().name("request").start();
        span.end();
        return span.context();
    }

    private SpanData endedNamed(String name) {
        List<SpanData> named = new ArrayList<>(ended.stream().filter(span -> span.getName().equals(name)).toList());
        assertThat(named).hasSize(1);
        return named.getFirst();
    }

    private static Purchase purchase(String traceparent) {
        return new Purchase(UUID.randomUUID(), 1, 1, LocalDate.of(2021, 1, 1), List.of(new PurchaseItem(1, 1)),
                Instant.EPOCH, traceparent);
    }
}
