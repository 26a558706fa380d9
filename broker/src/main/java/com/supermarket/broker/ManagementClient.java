package com.supermarket.broker;

import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * A small client of the RabbitMQ management HTTP API ({@code rabbitmq_management} plugin): the
 * parts the platform needs to set policies and to find shard queues, which AMQP cannot do.
 * Thread-safe.
 */
public final class ManagementClient {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final URI baseUri;
    private final String authorization;
    private final HttpClient http;

    /**
     * @param baseUri  e.g. {@code http://localhost:15672}
     * @param username a user with the {@code policymaker} (or {@code administrator}) tag
     * @param password its password
     */
    public ManagementClient(URI baseUri, String username, String password) {
        String base = baseUri.toString();
        this.baseUri = URI.create(base.endsWith("/") ? base : base + "/");
        this.authorization = "Basic " + Base64.getEncoder()
                .encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
        // HTTP/1.1: the default HTTP/2 upgrade attempt makes the management listener (Cowboy)
        // close the connection on requests with a body ("EOF reached while reading").
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
    }

    /** Creates or replaces a policy in {@code vhost}. */
    public void putPolicy(String vhost, String name, String pattern, String applyTo, int priority,
                          Map<String, Object> definition) {
        var body = Map.of("pattern", pattern, "apply-to", applyTo, "priority", priority, "definition", definition);
        send("PUT", "api/policies/" + encode(vhost) + "/" + encode(name), WireFormat.encode(body));
    }

    /** The names of the queues of {@code vhost} whose names start with {@code prefix}, sorted. */
    public List<String> queueNames(String vhost, String prefix) {
        JsonNode queues = WireFormat.mapper().readTree(send("GET", "api/queues/" + encode(vhost) + "?columns=name", null));
        List<String> names = new ArrayList<>();
        for (JsonNode queue : queues) {
            String name = queue.get("name").asString();
            if (name.startsWith(prefix)) {
                names.add(name);
            }
        }
        names.sort(null);
        return names;
    }

    /**
     * Sends a request and returns the response body; any non-2xx status is an exception. An
     * idempotent request (all but {@code POST}) whose connection fails is sent once more: the
     * management listener closes a kept-alive connection after a number of requests or a time
     * idle, and a request already on its way then gets no answer at all.
     */
    public byte[] send(String method, String path, byte[] body) {
        HttpRequest request = HttpRequest.newBuilder(baseUri.resolve(path))
                .timeout(TIMEOUT)
                .header("Authorization", authorization)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        try {
            HttpResponse<byte[]> response;
            try {
                response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                if (method.equals("POST")) {
                    throw e;
                }
                response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            }
            if (response.statusCode() / 100 != 2) {
                throw new ManagementApiException(method + " " + path + " answered " + response.statusCode() + ": "
                        + new String(response.body(), StandardCharsets.UTF_8));
            }
            return response.body();
        } catch (IOException e) {
            throw new ManagementApiException("RabbitMQ management API at " + baseUri + " unreachable (" + e
                    + "); is the rabbitmq_management plugin enabled? rabbitmq-plugins enable rabbitmq_management", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ManagementApiException("interrupted calling " + baseUri, e);
        }
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A management API call failed; the message says which call and why. */
    public static final class ManagementApiException extends RuntimeException {
        public ManagementApiException(String message) {
            super(message);
        }

        public ManagementApiException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
