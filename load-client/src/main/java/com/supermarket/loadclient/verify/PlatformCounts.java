package com.supermarket.loadclient.verify;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the services' public counts: purchases-service's {@code GET /purchases/count} (the
 * purchases in its database) and its counter {@code purchases_stored_total} (first writes since it
 * started: cheap, unlike the database's count, so it is what progress is watched by), and
 * store-service's gauge {@code store_purchases_counted} (distinct purchases in its counts, which
 * survives its restarts), summed over the partitions of each copy group. A count that cannot be read is empty. Thread-safe (the HTTP client is).
 */
final class PlatformCounts {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration METRICS_TIMEOUT = Duration.ofSeconds(10);
    /** The database's count is a COUNT(*), on DynamoDB a Scan of the whole table. */
    private static final Duration STORED_TIMEOUT = Duration.ofMinutes(2);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI storedCount;
    private final URI purchasesMetrics;
    private final List<URI> storeMetrics;
    private final int copies;

    /** One copy of every store partition; see the other constructor. */
    PlatformCounts(URI purchasesUrl, URI purchasesMetrics, List<URI> storeMetrics) {
        this(purchasesUrl, purchasesMetrics, storeMetrics, 1);
    }

    /**
     * @param purchasesUrl     purchases-service's base URL (its {@code /purchases/count})
     * @param purchasesMetrics purchases-service's Prometheus scrape URL
     * @param storeMetrics     the Prometheus scrape URL of each store-service instance, copy group
     *                         by copy group: the partitions of copy 0, then those of copy 1, ...
     * @param copies           how many copies of every partition run (copy groups)
     */
    PlatformCounts(URI purchasesUrl, URI purchasesMetrics, List<URI> storeMetrics, int copies) {
        if (copies < 1 || storeMetrics.isEmpty() || storeMetrics.size() % copies != 0) {
            throw new IllegalArgumentException(storeMetrics.size() + " store-service URL(s) cannot be split into " + copies
                    + " copy group(s) of the same partitions");
        }
        String base = purchasesUrl.toString();
        this.storedCount = URI.create((base.endsWith("/") ? base : base + "/") + "purchases/count");
        this.purchasesMetrics = purchasesMetrics;
        this.storeMetrics = List.copyOf(storeMetrics);
        this.copies = copies;
    }

    /** How many copy groups the store-service URLs form. */
    int copies() {
        return copies;
    }

    /** Purchases in purchases-service's database. */
    OptionalLong stored() {
        return get(storedCount, STORED_TIMEOUT).map(PlatformCounts::count).orElse(OptionalLong.empty());
    }

    /** Purchases purchases-service wrote first since it started (a counter: for watching progress). */
    OptionalLong written() {
        return get(purchasesMetrics, METRICS_TIMEOUT).map(text -> sum(text, "purchases_stored_total"))
                .orElse(OptionalLong.empty());
    }

    /**
     * Distinct purchases in store-service's counts, over every partition of copy group 0 (each
     * counts its own stores only, so a purchase counted by two would show as one too many); empty
     * if a partition cannot be read.
     */
    OptionalLong counted() {
        return counted(0);
    }

    /** {@link #counted()} of every copy group, copy by copy: each counts every purchase on its own. */
    List<OptionalLong> countedByCopy() {
        List<OptionalLong> counted = new ArrayList<>(copies);
        for (int copy = 0; copy < copies; copy++) {
            counted.add(counted(copy));
        }
        return counted;
    }

    private OptionalLong counted(int copy) {
        int partitions = storeMetrics.size() / copies;
        long total = 0;
        for (URI partition : storeMetrics.subList(copy * partitions, (copy + 1) * partitions)) {
            OptionalLong counted = get(partition, METRICS_TIMEOUT).map(text -> sum(text, "store_purchases_counted"))
                    .orElse(OptionalLong.empty());
            if (counted.isEmpty()) {
                return counted;
            }
            total += counted.getAsLong();
        }
        return OptionalLong.of(total);
    }

    /** The {@code count} of {@code {"count": N}}, empty if the body is not that. */
    static OptionalLong count(String body) {
        try {
            JsonNode count = JSON.readTree(body).get("count");
            return count != null && count.isIntegralNumber() ? OptionalLong.of(count.asLong()) : OptionalLong.empty();
        } catch (RuntimeException notJson) {
            return OptionalLong.empty();
        }
    }

    /** The sum of every series of {@code metric} in Prometheus text, empty if it has none. */
    static OptionalLong sum(String text, String metric) {
        double total = 0;
        boolean found = false;
        for (String line : text.split("\n")) {
            if (!line.startsWith(metric)) {
                continue;
            }
            String rest = line.substring(metric.length());
            if (rest.startsWith("{")) {
                rest = rest.substring(rest.lastIndexOf('}') + 1);
            } else if (!rest.startsWith(" ")) {
                continue; // another metric whose name starts the same
            }
            String[] fields = rest.trim().split("\\s+");
            try {
                total += Double.parseDouble(fields[0]);
                found = true;
            } catch (NumberFormatException notANumber) {
                return OptionalLong.empty();
            }
        }
        return found ? OptionalLong.of(Math.round(total)) : OptionalLong.empty();
    }

    private java.util.Optional<String> get(URI uri, Duration timeout) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? java.util.Optional.of(response.body()) : java.util.Optional.empty();
        } catch (IOException e) {
            return java.util.Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return java.util.Optional.empty();
        }
    }
}
