package com.supermarket.deployment;

import static com.supermarket.deployment.DeploymentFiles.map;

import com.supermarket.contract.WireFormat;
import java.util.List;
import java.util.Map;

/**
 * {@code deploy/rabbitmq/definitions.json}, the broker state docker-compose boots RabbitMQ with.
 * Immutable after construction; thread-safe.
 */
final class RabbitDefinitions {

    static final String FILE = "deploy/rabbitmq/definitions.json";

    private final Map<String, Object> json;

    @SuppressWarnings("unchecked")
    RabbitDefinitions() {
        this.json = WireFormat.mapper().readValue(DeploymentFiles.read(FILE), Map.class);
    }

    List<Map<String, Object>> section(String name) {
        return ((List<?>) json.get(name)).stream().map(DeploymentFiles::map).toList();
    }

    /** The one vhost the platform lives in. */
    String vhost() {
        List<Map<String, Object>> vhosts = section("vhosts");
        if (vhosts.size() != 1) {
            throw new IllegalStateException(FILE + " must declare exactly one vhost: " + vhosts);
        }
        return (String) vhosts.getFirst().get("name");
    }

    /** The users the services log in as, one per service. */
    List<String> users() {
        return section("users").stream().map(u -> (String) u.get("name")).toList();
    }

    /** The shards-per-node of the sharding policies (they must agree). */
    int shardsPerNode() {
        return section("policies").stream()
                .filter(p -> map(p.get("definition")).containsKey("shards-per-node"))
                .map(p -> ((Number) map(p.get("definition")).get("shards-per-node")).intValue())
                .distinct()
                .reduce((a, b) -> {
                    throw new IllegalStateException("sharding policies disagree on shards-per-node");
                })
                .orElseThrow();
    }
}
