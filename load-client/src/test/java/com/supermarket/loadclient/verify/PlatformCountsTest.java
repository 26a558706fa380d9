package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;

import org.junit.jupiter.api.Test;

class PlatformCountsTest {

    @Test
    void sumsEverySeriesOfTheMetricAndNoOtherMetricWithTheSamePrefix() {
        String scrape = """
                # HELP store_purchases_counted Distinct purchases in the counts
                # TYPE store_purchases_counted gauge
                store_purchases_counted{application="store-service",instance="a"} 1200.0
                store_purchases_counted{application="store-service",instance="b"} 34.0
                store_purchases_counted_extra 999.0
                purchases_stored_total 7.0
                """;

        assertThat(PlatformCounts.sum(scrape, "store_purchases_counted")).isEqualTo(OptionalLong.of(1234));
        assertThat(PlatformCounts.sum(scrape, "purchases_stored_total")).isEqualTo(OptionalLong.of(7));
        assertThat(PlatformCounts.sum(scrape, "absent_metric")).isEmpty();
    }

    @Test
    void readsTheCountOfTheLookupEndpoint() {
        assertThat(PlatformCounts.count("{\"count\":42}")).isEqualTo(OptionalLong.of(42));
        assertThat(PlatformCounts.count("{\"message\":\"the purchase store is unavailable\"}")).isEmpty();
        assertThat(PlatformCounts.count("<html>")).isEmpty();
    }

    @Test
    void countsOverEveryStorePartitionOrNotAtAllWhenOneCannotBeRead() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 4);
        for (String partition : List.of("p0", "p1")) {
            server.createContext("/" + partition, exchange -> {
                byte[] body = ("store_purchases_counted " + (partition.equals("p0") ? 40 : 2) + ".0\n")
                        .getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
        }
        server.start();
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            URI purchases = URI.create(base);

            assertThat(new PlatformCounts(purchases, purchases, List.of(URI.create(base + "/p0"), URI.create(base + "/p1")))
                    .counted()).isEqualTo(OptionalLong.of(42));
            assertThat(new PlatformCounts(purchases, purchases, List.of(URI.create(base + "/p0"), URI.create("http://127.0.0.1:1/")))
                    .counted()).isEmpty();
        } finally {
            server.stop(0);
        }
    }
}
