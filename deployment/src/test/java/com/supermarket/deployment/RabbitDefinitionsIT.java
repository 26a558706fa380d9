package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.supermarket.broker.BrokerTopology;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docker-compose's definitions.json, imported into a throw-away vhost of the real test RabbitMQ
 * (with the sharding plugin), yields a working platform topology: the plugin creates the shard
 * queues from the policies, a purchase published to the ingress exchange lands in both sharded
 * exchanges, and a rejected message reaches the parking queue through the shard-queue policy.
 */
class RabbitDefinitionsIT {

    @Test
    void importedDefinitionsGiveAWorkingShardedTopology() throws Exception {
        var definitions = new RabbitDefinitions();
        try (TestBroker broker = TestBroker.create("definitions")) {
            broker.management().send("POST", "api/definitions/" + URLEncoder.encode(broker.vhost(), StandardCharsets.UTF_8),
                    WireFormat.encode(topologyFor(definitions, broker.vhost())));

            for (String exchange : Topology.SHARDED_EXCHANGES) {
                await("shard queues of " + exchange).atMost(Duration.ofSeconds(30))
                        .until(() -> broker.shardQueues(exchange).size() >= definitions.shardsPerNode());
            }
            assertThat(broker.messageCount(Topology.STORE_RPC_QUEUE)).isZero();

            try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
                channel.confirmSelect();
                channel.basicPublish(Topology.INGRESS_EXCHANGE, "7",
                        new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2).build(),
                        "{}".getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(10_000);

                for (String exchange : Topology.SHARDED_EXCHANGES) {
                    await("the purchase behind " + exchange).atMost(Duration.ofSeconds(10))
                            .until(() -> broker.messageCountBehind(exchange) == 1);
                }

                String shard = broker.shardQueues(Topology.STORE_EXCHANGE).stream()
                        .filter(q -> broker.messageCount(q) == 1).findFirst().orElseThrow();
                GetResponse delivery = channel.basicGet(shard, false);
                channel.basicReject(delivery.getEnvelope().getDeliveryTag(), false);
            }
            await("the rejected message in " + Topology.PARKING_QUEUE).atMost(Duration.ofSeconds(10))
                    .until(() -> broker.messageCount(Topology.PARKING_QUEUE) == 1);
            assertThat(broker.messageCountBehind(Topology.PURCHASE_EXCHANGE)).isEqualTo(1);
        }
    }

    @Test
    void shardCountOfTheDefinitionsIsTheServicesDefault() {
        assertThat(new RabbitDefinitions().shardsPerNode()).isEqualTo(BrokerTopology.DEFAULT_SHARDS_PER_NODE);
    }

    /** The topology sections of the file, moved to {@code vhost} (users and vhosts stay out). */
    private static Map<String, Object> topologyFor(RabbitDefinitions definitions, String vhost) {
        Map<String, Object> topology = new LinkedHashMap<>();
        for (String section : List.of("exchanges", "queues", "bindings", "policies")) {
            topology.put(section, definitions.section(section).stream().map(item -> {
                Map<String, Object> moved = new LinkedHashMap<>(item);
                moved.put("vhost", vhost);
                return moved;
            }).toList());
        }
        return topology;
    }
}
