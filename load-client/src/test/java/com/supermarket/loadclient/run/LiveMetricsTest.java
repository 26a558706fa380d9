package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.RequestType;

/** What the event loops and the tally record reaches {@code /metrics}, in Prometheus' text format. */
class LiveMetricsTest {

    private final LiveMetrics live = new LiveMetrics("m5.large");
    private final LoopMetrics loop = new LoopMetrics(live);
    private final FailureTally failures = new FailureTally(new PrintStream(new ByteArrayOutputStream()), live);

    @Test
    void successesAreCountedByTypeAndTheirLatencyFallsInTheHistogramsBuckets() {
        loop.recordSuccess(RequestType.POST, 800);
        loop.recordSuccess(RequestType.POST, 3_000);
        loop.recordSuccess(RequestType.GET_STORE, 40_000);

        String scrape = live.scrape();

        assertThat(scrape)
                .contains("# TYPE loadclient_request_seconds histogram")
                .contains("loadclient_requests_total{outcome=\"success\",run=\"m5.large\",type=\"POST\"} 2")
                .contains("loadclient_requests_total{outcome=\"success\",run=\"m5.large\",type=\"GET_STORE\"} 1")
                .contains("loadclient_request_seconds_bucket{run=\"m5.large\",type=\"POST\",le=\"0.001\"} 1")
                .contains("loadclient_request_seconds_bucket{run=\"m5.large\",type=\"POST\",le=\"0.005\"} 2")
                .contains("loadclient_request_seconds_bucket{run=\"m5.large\",type=\"POST\",le=\"+Inf\"} 2")
                .contains("loadclient_request_seconds_bucket{run=\"m5.large\",type=\"GET_STORE\",le=\"0.025\"} 0")
                .contains("loadclient_request_seconds_bucket{run=\"m5.large\",type=\"GET_STORE\",le=\"0.05\"} 1")
                .contains("loadclient_request_seconds_count{run=\"m5.large\",type=\"POST\"} 2")
                .contains("loadclient_request_seconds_sum{run=\"m5.large\",type=\"POST\"} 0.0038");
        assertThat(scrape.lines().filter(line -> line.startsWith("loadclient_request_seconds_bucket{run=\"m5.large\",type=\"POST\"")))
                .hasSize(LiveMetrics.LATENCY_BUCKETS.length + 1);
    }

    @Test
    void failuresAreCountedByTypeAndAttemptsByReason() {
        failures.status(503, RequestType.POST, "/purchase/1", "busy");
        failures.status(503, RequestType.POST, "/purchase/1", "busy");
        failures.error(new ConnectException("refused"), RequestType.GET_TOP10, "/items/top10/5");
        failures.gaveUp(RequestType.POST);

        assertThat(live.scrape())
                .contains("loadclient_failed_attempts_total{kind=\"status\",reason=\"503\",run=\"m5.large\"} 2")
                .contains("loadclient_failed_attempts_total{kind=\"error\",reason=\"ConnectException\",run=\"m5.large\"} 1")
                .contains("loadclient_requests_total{outcome=\"failed\",run=\"m5.large\",type=\"POST\"} 1")
                .contains("loadclient_requests_total{outcome=\"failed\",run=\"m5.large\",type=\"GET_TOP10\"} 0");
    }

    @Test
    void inFlightAreTheRequestsStartedAndNotOverAndLateStartsAreCounted() {
        LongAdder completed = new LongAdder();
        live.watch(completed);
        loop.recordStart();
        loop.recordStart();
        loop.recordStart();
        completed.increment();
        loop.recordPacedStart(-1);
        loop.recordPacedStart(2_000_000);

        assertThat(live.scrape())
                .contains("loadclient_requests_in_flight{run=\"m5.large\"} 2")
                .contains("loadclient_late_starts_total{run=\"m5.large\"} 1");
    }

    @Test
    void servesTheScrapeOnItsPortUntilClosed() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> answer;
        URI uri;
        try (LiveMetrics served = LiveMetrics.serve(0, "local")) {
            uri = URI.create("http://127.0.0.1:" + served.port() + "/metrics");
            answer = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        }

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(answer.body()).contains("loadclient_requests_total{outcome=\"success\",run=\"local\",type=\"POST\"} 0");
        assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class);
    }
}
