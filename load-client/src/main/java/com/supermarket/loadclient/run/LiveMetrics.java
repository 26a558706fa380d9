package com.supermarket.loadclient.run;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import com.supermarket.loadclient.result.RequestType;

/**
 * A run's live metrics ({@code run --metrics-port}), every one tagged {@code run} with the run's
 * label, for Prometheus to scrape while the run goes:
 * <ul>
 * <li>{@code loadclient_request_seconds} (histogram, tag {@code type}): the latency of each
 * successful request, as the run's summary counts it (in the open model from its intended
 * time), in the {@link #LATENCY_BUCKETS} that {@code histogram_quantile} reads;</li>
 * <li>{@code loadclient_requests_total} (tags {@code type}, {@code outcome} success or failed):
 * requests over for good;</li>
 * <li>{@code loadclient_failed_attempts_total} (tags {@code kind} status or error, {@code reason}
 * the HTTP status or the error's kind): failed attempts, retried or not;</li>
 * <li>{@code loadclient_requests_in_flight}: requests started and not over (sent, or waiting for
 * their retry);</li>
 * <li>{@code loadclient_late_starts_total}: paced requests that could not start on time.</li>
 * </ul>
 * The event loops record into them where they record the run's own figures ({@link LoopMetrics},
 * {@link FailureTally}); a run without {@code --metrics-port} has none and records nothing more.
 * <p>
 * Thread-safety: Micrometer's meters and the {@link LongAdder} are thread-safe; the HTTP server
 * answers on a thread of its own.
 */
final class LiveMetrics implements AutoCloseable {

    /** The latency histogram's buckets (upper bounds; Prometheus adds +Inf). */
    static final Duration[] LATENCY_BUCKETS = {
            Duration.ofNanos(100_000), Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1),
            Duration.ofNanos(2_500_000), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2_500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(30) };

    private static final RequestType[] TYPES = RequestType.values();

    private final PrometheusMeterRegistry registry;
    private final Timer[] latency = new Timer[TYPES.length];
    private final Counter[] failed = new Counter[TYPES.length];
    private final Counter lateStarts;
    private final LongAdder started = new LongAdder();
    private HttpServer server;
    private ExecutorService answering;

    /** The meters, not yet served: {@link #serve} does. */
    LiveMetrics(String label) {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().commonTags("run", label);
        for (RequestType type : TYPES) {
            Timer timer = Timer.builder("loadclient.request")
                    .description("Latency of the successful requests (open model: from the intended send time)")
                    .tag("type", type.csvName()).serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
            latency[type.ordinal()] = timer;
            FunctionCounter.builder("loadclient.requests", timer, Timer::count)
                    .description("Requests over for good").tags("type", type.csvName(), "outcome", "success")
                    .register(registry);
            failed[type.ordinal()] = Counter.builder("loadclient.requests").description("Requests over for good")
                    .tags("type", type.csvName(), "outcome", "failed").register(registry);
        }
        lateStarts = Counter.builder("loadclient.late.starts")
                .description("Paced requests that could not start at their intended time").register(registry);
    }

    /** Serves {@code GET /metrics} on {@code port} of every interface, until {@link #close}. */
    static LiveMetrics serve(int port, String label) throws IOException {
        LiveMetrics metrics = new LiveMetrics(label);
        HttpServer server = HttpServer.create(new InetSocketAddress(port), 0);
        server.createContext("/metrics", metrics::answer);
        metrics.answering = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("metrics-http").daemon().factory());
        server.setExecutor(metrics.answering);
        server.start();
        metrics.server = server;
        return metrics;
    }

    /** The port served on (for a {@link #serve} on port 0). */
    int port() {
        return server.getAddress().getPort();
    }

    /** The run's requests over for good, for the in-flight gauge; call once per run measured. */
    void watch(LongAdder completed) {
        Gauge.builder("loadclient.requests.in.flight", this, live -> live.started.sum() - completed.sum())
                .description("Requests started and not over (sent, or waiting for a retry)").strongReference(true)
                .register(registry);
    }

    /** The latency timer of each request type, by ordinal: the event loops record into them. */
    Timer[] latencyTimers() {
        return latency.clone();
    }

    void started() {
        started.increment();
    }

    void failed(RequestType type) {
        failed[type.ordinal()].increment();
    }

    void lateStart() {
        lateStarts.increment();
    }

    /** Counts the failed attempts of {@code reason} (an HTTP status or an error's kind) from {@code attempts}. */
    LongAdder failedAttempts(String kind, String reason, LongAdder attempts) {
        FunctionCounter.builder("loadclient.failed.attempts", attempts, LongAdder::sum)
                .description("Failed attempts (retried or not) by HTTP status or error").tags("kind", kind, "reason", reason)
                .register(registry);
        return attempts;
    }

    /** The metrics in Prometheus' text format, as {@code /metrics} answers. */
    String scrape() {
        return registry.scrape();
    }

    private void answer(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(200, head ? -1 : body.length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    @Override
    public void close() {
        if (server != null) {
            server.stop(0);
            answering.shutdownNow();
        }
        registry.close();
    }
}
