package com.supermarket.api.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A plain HTTP client for the running application in integration tests: the API on the server
 * port, actuator on the management port. Thread-safe.
 */
public final class ApiClient {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final String management;

    public ApiClient(int port, int managementPort) {
        this.base = "http://127.0.0.1:" + port;
        this.management = "http://127.0.0.1:" + managementPort + "/actuator";
    }

    public static String body(int... itemIds) {
        StringBuilder json = new StringBuilder("{\"items\":[");
        for (int i = 0; i < itemIds.length; i++) {
            json.append(i == 0 ? "" : ",").append("{\"ItemID\":\"").append(itemIds[i]).append("\",\"numberOfItems:\":1}");
        }
        return json.append("]}").toString();
    }

    public HttpResponse<String> postPurchase(int store, String body) {
        return post("/purchase/" + store + "/customer/" + (store * 1000 + 1) + "/date/20210101", body, "application/json");
    }

    /** POSTs a purchase of {@code store} with an {@code Idempotency-Key} header. */
    public HttpResponse<String> postPurchase(int store, String body, String idempotencyKey) {
        return post("/purchase/" + store + "/customer/" + (store * 1000 + 1) + "/date/20210101", body, "application/json",
                idempotencyKey);
    }

    public HttpResponse<String> post(String path, String body, String contentType) {
        return post(path, body, contentType, null);
    }

    private HttpResponse<String> post(String path, String body, String contentType, String idempotencyKey) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (idempotencyKey != null) {
            request.header("Idempotency-Key", idempotencyKey);
        }
        return send(request.build());
    }

    /**
     * Sends {@code method path} with the given headers (name, value, name, value, ...) and a JSON
     * body, or none when {@code body} is null.
     */
    public HttpResponse<String> send(String method, String path, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return send(request.build());
    }

    public HttpResponse<String> get(String path) {
        return get(URI.create(base + path));
    }

    /** GETs {@code /actuator + path} on the management port, e.g. {@code actuator("/health/readiness")}. */
    public HttpResponse<String> actuator(String path) {
        return get(URI.create(management + path));
    }

    private HttpResponse<String> get(URI uri) {
        return send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET().build());
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(request.uri() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
