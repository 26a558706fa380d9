package com.supermarket.tools.prometheus;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

class PrometheusTextTest {

    private static final String SCRAPE = """
            # HELP http_server_requests_seconds
            # TYPE http_server_requests_seconds summary
            http_server_requests_seconds_count{error="none",method="POST",outcome="SUCCESS",status="201",uri="/purchase/{storeID}/customer/{customerID}/date/{date}"} 1200
            http_server_requests_seconds_count{error="none",method="POST",outcome="CLIENT_ERROR",status="400",uri="/purchase"} 3
            http_server_requests_seconds_count{error="none",method="GET",outcome="SUCCESS",status="200",uri="/items/store/{storeID}"} 50
            jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 1.048576E7
            jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 2.5E7
            jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 9.0E7
            api_purchases_accepted_total 4711.0
            api_purchases_accepted_total_created 1.7E9
            """;

    @Test
    void sumsTheSamplesWithTheLabelsAsked() {
        PrometheusText text = PrometheusText.parse(SCRAPE);

        assertThat(text.sum("http_server_requests_seconds_count", Map.of("method", "POST"))).hasValue(1203);
        assertThat(text.sum("jvm_memory_used_bytes", Map.of("area", "heap"))).hasValue(3.548576E7);
        assertThat(text.sum("api_purchases_accepted_total", Map.of())).hasValue(4711);
    }

    @Test
    void aMetricIsMatchedByItsWholeName() {
        assertThat(PrometheusText.parse(SCRAPE).select("api_purchases_accepted_total", Map.of())).hasSize(1);
        assertThat(PrometheusText.parse(SCRAPE).sum("api_purchases_accepted", Map.of())).isEmpty();
    }

    @Test
    void labelValuesMayHoldBracesCommasSpacesAndEscapedQuotes() {
        PrometheusText text = PrometheusText.parse("""
                refused_total{reason="broker, \\"down\\" {now}",service="api x"} 7 1712345678000
                """);

        assertThat(text.samples()).singleElement().satisfies(sample -> {
            assertThat(sample.labels()).containsEntry("reason", "broker, \"down\" {now}").containsEntry("service", "api x");
            assertThat(sample.value()).isEqualTo(7);
        });
    }

    @Test
    void skipsCommentsBlankAndBrokenLinesAndReadsSpecialValues() {
        PrometheusText text = PrometheusText.parse("""
                # a comment

                cut_short{area="he
                no_value
                bad_value abc
                up +Inf
                down NaN
                """);

        assertThat(text.samples()).extracting(PrometheusText.Sample::name).containsExactly("up", "down");
        assertThat(text.sum("up", Map.of())).hasValue(Double.POSITIVE_INFINITY);
    }

    @Test
    void anEmptyScrapeHasNoSample() {
        assertThat(PrometheusText.parse("").samples()).isEmpty();
        assertThat(PrometheusText.parse("").sum("up", Map.of())).isEmpty();
    }
}
