package com.supermarket.deployment;

import com.sun.net.httpserver.HttpServer;
import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.ManagementClient;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The policies the services would apply ({@link BrokerTopology#applyPolicies}), captured by a
 * local stand-in for the management API (on the loopback interface; nothing leaves this
 * machine), for comparing with what a deployment declares instead.
 */
final class AppliedPolicies {

    private AppliedPolicies() {
    }

    /** Policy name -> the body PUT for it ({@code pattern}, {@code apply-to}, {@code priority}, {@code definition}). */
    static Map<String, Map<String, Object>> of(BrokerSettings settings, String vhost) {
        Map<String, Map<String, Object>> policies = new ConcurrentHashMap<>();
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/api/policies/", exchange -> {
            String[] path = exchange.getRequestURI().getRawPath().split("/");
            String policyVhost = URLDecoder.decode(path[3], StandardCharsets.UTF_8);
            String name = URLDecoder.decode(path[4], StandardCharsets.UTF_8);
            @SuppressWarnings("unchecked")
            Map<String, Object> body = WireFormat.mapper().readValue(exchange.getRequestBody().readAllBytes(), Map.class);
            if (exchange.getRequestMethod().equals("PUT") && policyVhost.equals(vhost)) {
                policies.put(name, body);
            }
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        try {
            URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
            BrokerTopology.applyPolicies(new ManagementClient(uri, "recorder", "recorder"), vhost, settings);
        } finally {
            server.stop(0);
        }
        return policies;
    }
}
