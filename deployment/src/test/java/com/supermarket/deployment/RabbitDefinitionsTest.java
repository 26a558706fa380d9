package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.BrokerSettings;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.BrokerUsers;
import com.supermarket.contract.Topology;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;

/**
 * The RabbitMQ definitions docker-compose boots with declare exactly what the services would
 * declare themselves: the contract's {@link BrokerTopology} declarables, and its policies as PUT
 * to a recording management API, compared with the file. One source of truth.
 */
@SuppressWarnings("unchecked")
class RabbitDefinitionsTest {

    private final RabbitDefinitions definitions = new RabbitDefinitions();

    @Test
    void declaresExactlyTheExchangesOfTheContractTopology() {
        List<Map<String, Object>> declared = recordDeclarations().get("exchanges");

        assertThat(definitions.section("exchanges"))
                .allSatisfy(e -> assertThat(e).containsEntry("vhost", definitions.vhost())
                        .containsEntry("auto_delete", false).containsEntry("internal", false)
                        .containsEntry("arguments", Map.of()))
                .extracting(e -> Map.of("name", e.get("name"), "type", e.get("type"), "durable", e.get("durable")))
                .containsExactlyInAnyOrderElementsOf(declared);
        assertThat(declared).extracting(e -> e.get("name")).contains(Topology.INGRESS_EXCHANGE,
                Topology.PURCHASE_EXCHANGE, Topology.STORE_EXCHANGE, Topology.DEAD_LETTER_EXCHANGE);
    }

    @Test
    void declaresExactlyTheBindingsOfTheContractTopology() {
        List<Map<String, Object>> declared = recordDeclarations().get("bindings");

        assertThat(definitions.section("bindings"))
                .allSatisfy(b -> assertThat(b).containsEntry("vhost", definitions.vhost()).containsEntry("arguments", Map.of()))
                .extracting(b -> Map.of("source", b.get("source"), "destination", b.get("destination"),
                        "destination_type", b.get("destination_type"), "routing_key", b.get("routing_key")))
                .containsExactlyInAnyOrderElementsOf(declared);
    }

    @Test
    void declaresExactlyTheQueuesOfTheContractTopology() {
        List<Map<String, Object>> declared = recordDeclarations().get("queues");

        assertThat(definitions.section("queues"))
                .allSatisfy(q -> assertThat(q).containsEntry("vhost", definitions.vhost()))
                .extracting(q -> Map.of("name", q.get("name"), "durable", q.get("durable"),
                        "auto_delete", q.get("auto_delete"), "arguments", q.get("arguments")))
                .containsExactlyInAnyOrderElementsOf(declared);
        assertThat(declared).extracting(q -> q.get("name")).contains(Topology.PARKING_QUEUE, Topology.STORE_RPC_QUEUE);
    }

    @Test
    void carriesExactlyThePoliciesTheServicesWouldApply() {
        Map<String, Map<String, Object>> applied = AppliedPolicies.of(shardedSettings(), definitions.vhost());

        assertThat(definitions.section("policies")).hasSameSizeAs(applied.keySet()).allSatisfy(policy -> {
            assertThat(policy).containsEntry("vhost", definitions.vhost());
            Map<String, Object> expected = applied.get((String) policy.get("name"));
            assertThat(expected).as("BrokerTopology applies policy " + policy.get("name")).isNotNull();
            assertThat(policy).containsEntry("pattern", expected.get("pattern"))
                    .containsEntry("apply-to", expected.get("apply-to"))
                    .containsEntry("priority", expected.get("priority"))
                    .containsEntry("definition", expected.get("definition"));
        });
        assertThat(applied).containsKeys(Topology.shardingPolicyName(Topology.PURCHASE_EXCHANGE),
                Topology.shardingPolicyName(Topology.STORE_EXCHANGE), Topology.SHARD_QUEUES_POLICY);
    }

    @Test
    void usesTheServicesDefaultShardCount() {
        assertThat(definitions.shardsPerNode()).isEqualTo(BrokerTopology.DEFAULT_SHARDS_PER_NODE);
    }

    @Test
    void definesOneUserPerServiceWithItsRightsOnlyWithoutAPasswordAndNoGuest() {
        List<Map<String, Object>> users = definitions.section("users");

        assertThat(definitions.users()).containsExactlyElementsOf(BrokerUsers.ALL.stream().map(BrokerUsers::name).toList())
                .doesNotContain("guest");
        assertThat(users).allSatisfy(user -> {
            assertThat(user.get("password_hash")).as("the password comes from .env, not the repository").isEqualTo("");
            assertThat((List<Object>) user.get("tags")).as("lists shard queues, sets no policy")
                    .containsExactly(BrokerUsers.MANAGEMENT_TAG);
        });
        assertThat(definitions.section("permissions")).hasSize(BrokerUsers.ALL.size());
        for (BrokerUsers rights : BrokerUsers.ALL) {
            assertThat(definitions.section("permissions")).as(rights.name()).anySatisfy(p -> assertThat(p)
                    .containsEntry("user", rights.name()).containsEntry("vhost", definitions.vhost())
                    .containsEntry("configure", rights.configure()).containsEntry("write", rights.write())
                    .containsEntry("read", rights.read()));
            assertThat(DeploymentFiles.read("deploy/rabbitmq/start.sh")).contains(rights.name() + "=");
        }
    }

    @Test
    void enablesTheShardingAndManagementPlugins() {
        String plugins = DeploymentFiles.read("deploy/rabbitmq/enabled_plugins").strip();

        assertThat(plugins).startsWith("[").endsWith("].");
        assertThat(plugins.substring(1, plugins.length() - 2).split(",\\s*"))
                .contains("rabbitmq_sharding", "rabbitmq_management");
    }

    /** What {@link BrokerTopology#declarables} declares in the sharded mode, in definitions.json's terms. */
    private static Map<String, List<Map<String, Object>>> recordDeclarations() {
        Map<String, List<Map<String, Object>>> recorded = new HashMap<>();
        recorded.put("exchanges", new ArrayList<>());
        recorded.put("bindings", new ArrayList<>());
        recorded.put("queues", new ArrayList<>());
        for (Declarable declarable : BrokerTopology.declarables(shardedSettings()).getDeclarables()) {
            switch (declarable) {
                case Exchange e -> {
                    assertThat(e.isAutoDelete() || e.isInternal() || !e.getArguments().isEmpty()).as(e.getName()).isFalse();
                    recorded.get("exchanges").add(Map.of("name", e.getName(), "type", e.getType(), "durable", e.isDurable()));
                }
                case Binding b -> recorded.get("bindings").add(Map.of("destination", b.getDestination(),
                        "source", b.getExchange(), "routing_key", b.getRoutingKey(),
                        "destination_type", b.getDestinationType().name().toLowerCase(Locale.ROOT)));
                case Queue q -> {
                    assertThat(q.isExclusive()).as("an exclusive queue cannot be predeclared: " + q.getName()).isFalse();
                    recorded.get("queues").add(Map.of("name", q.getName(), "durable", q.isDurable(),
                            "auto_delete", q.isAutoDelete(), "arguments", q.getArguments()));
                }
                default -> throw new UnsupportedOperationException(
                        "BrokerTopology declares " + declarable + ": teach this test what it declares");
            }
        }
        return recorded;
    }

    /** docker-compose's broker is a single node: the sharded mode, which definitions.json holds. */
    private static BrokerSettings shardedSettings() {
        return new BrokerSettings(URI.create("http://127.0.0.1:1"), BrokerTopology.DEFAULT_SHARDS_PER_NODE, true, null,
                Duration.ofSeconds(1), BrokerSettings.TopologyMode.SHARDED, 0, null);
    }
}
