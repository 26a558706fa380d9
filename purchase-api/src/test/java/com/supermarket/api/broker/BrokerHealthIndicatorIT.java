package com.supermarket.api.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.BrokerUsers;
import com.supermarket.broker.testing.TestBroker;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The broker readiness of purchase-api as its least-privilege user sees it (the chart's default,
 * rabbitmq.serviceUsers): a round trip that needs no right on any queue, since from RabbitMQ
 * 4.2.6/4.3 even a passive declare of a queue is refused to a user with no right on it.
 */
class BrokerHealthIndicatorIT {

    private final TestBroker admin = TestBroker.create("api-health");
    private CachingConnectionFactory connections;

    @AfterEach
    void cleanUp() {
        if (connections != null) {
            connections.destroy();
        }
        admin.close();
    }

    @Test
    void theLeastPrivilegeUserOfTheApiIsReadyWhileTheBrokerAnswers() {
        admin.applyTopology(1);
        TestBroker api = admin.user(BrokerUsers.PURCHASE_API);
        connections = new CachingConnectionFactory(api.connectionFactory());
        BrokerHealthIndicator indicator = new BrokerHealthIndicator(connections, new BlockedConnectionTracker(),
                new BrokerProperties(Duration.ofSeconds(5)));

        Health health = indicator.health();

        assertThat(health.getStatus()).as("readiness of purchase-api's own user: %s", health.getDetails()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsKey("roundTripMs");
    }
}
