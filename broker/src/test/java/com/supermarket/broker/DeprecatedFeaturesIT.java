package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.WireFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The test brokers run with every deprecated feature denied, so that the platform's use of one
 * fails a test here rather than an upgrade in production: each feature the broker lists is
 * denied, and using one (a transient non-exclusive queue, which RabbitMQ 4.3 still permits by
 * default) is refused.
 */
class DeprecatedFeaturesIT {

    @Test
    void everyDeprecatedFeatureTheBrokerKnowsIsDenied() {
        JsonNode features = WireFormat.mapper().readTree(
                TestServices.rabbitmqctl("list_deprecated_features", "name", "state", "--formatter", "json"));
        Map<String, String> states = new LinkedHashMap<>();
        features.forEach(feature -> states.put(feature.path("name").asString(), feature.path("state").asString()));

        assertThat(states).as("the broker's deprecated features (rabbitmq/deny-deprecated-features.conf denies each)")
                .isNotEmpty().allSatisfy((name, state) -> assertThat(state).as(name).isEqualTo("denied"));
    }

    @Test
    void aTransientSharedQueueIsRefused() throws Exception {
        try (TestBroker broker = TestBroker.create("deprecated")) {
            Connection connection = broker.newConnection();
            try {
                Channel channel = connection.createChannel();
                assertThatThrownBy(() -> channel.queueDeclare("transient-shared", false, false, false, null))
                        .hasStackTraceContaining("Feature `transient_nonexcl_queues` is deprecated");
            } finally {
                // The broker closes the whole connection for it.
                connection.abort();
            }
        }
    }
}
