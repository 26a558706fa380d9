package com.supermarket.loadclient.verify;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Whether the copies of every store partition hold the same counts: each store-service instance's
 * {@code GET /state/summary} ({@code purchases}, {@code quantity} and an order-independent
 * {@code digest} of every (store, item, count)) compared partition by partition. Thread-safe
 * (the HTTP client is).
 */
final class CopyAgreement {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * @param agree whether every partition's copies were read and match
     * @param lines one line per partition, saying what was compared or what differs
     */
    record Result(boolean agree, List<String> lines) {
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<URI> instances;
    private final int copies;

    /**
     * @param instances every store-service instance's base URL (its server port), copy group by
     *                  copy group as the metrics URLs: the partitions of copy 0, then of copy 1, ...
     * @param copies    how many copies of every partition run
     */
    CopyAgreement(List<URI> instances, int copies) {
        if (copies < 1 || instances.isEmpty() || instances.size() % copies != 0) {
            throw new IllegalArgumentException(instances.size() + " store-service state URL(s) cannot be split into "
                    + copies + " copy group(s) of the same partitions");
        }
        this.instances = List.copyOf(instances);
        this.copies = copies;
    }

    Result check() {
        int partitions = instances.size() / copies;
        boolean agree = true;
        List<String> lines = new ArrayList<>();
        for (int partition = 0; partition < partitions; partition++) {
            List<String> summaries = new ArrayList<>();
            for (int copy = 0; copy < copies; copy++) {
                summaries.add(summary(instances.get(copy * partitions + partition)));
            }
            boolean same = summaries.stream().distinct().count() == 1 && !summaries.getFirst().startsWith("unreadable");
            agree &= same;
            lines.add(String.format(Locale.ROOT, "partition %d: %d copies %s: %s", partition, copies,
                    same ? "agree" : "DIFFER", same ? summaries.getFirst() : String.join(" | ", summaries)));
        }
        return new Result(agree, lines);
    }

    /** {@code purchases P, quantity Q, digest D} of one instance, or why it could not be read. */
    private String summary(URI instance) {
        String base = instance.toString();
        URI uri = URI.create((base.endsWith("/") ? base : base + "/") + "state/summary");
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(1)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return "unreadable " + uri + ": " + response.statusCode() + " " + response.body().strip();
            }
            JsonNode summary = JSON.readTree(response.body());
            return "purchases " + summary.get("purchases").asLong() + ", quantity " + summary.get("quantity").asLong()
                    + ", digest " + summary.get("digest").asString();
        } catch (IOException | RuntimeException e) {
            return "unreadable " + uri + ": " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unreadable " + uri + ": interrupted";
        }
    }
}
