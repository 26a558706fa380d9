package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doNothing;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.supermarket.contract.Topology;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

class BrokerSetupTest {

    private final RabbitAdmin admin = mock(RabbitAdmin.class);
    private final ManagementClient unusedManagement = new ManagementClient(URI.create("http://127.0.0.1:1"), "u", "p");

    private static BrokerSettings settings(boolean managePolicies) {
        return new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, managePolicies, null, Duration.ofSeconds(1), null, 0, null);
    }

    @Test
    void aMissingShardingPluginIsRetriedWithAMessageThatSaysHowToEnableIt() {
        doThrow(new AmqpIOException(new IOException("connection error; protocol method: #method<connection.close>"
                + "(reply-code=503, reply-text=COMMAND_INVALID - unknown exchange type 'x-modulus-hash')")))
                .doNothing().when(admin).declareExchange(any(Exchange.class));
        BrokerSetup setup = new BrokerSetup(admin, unusedManagement, "/", settings(false), BrokerUsers.ADMINISTRATOR);

        assertThat(setup.ensure()).isFalse();
        assertThat(setup.problem()).contains("rabbitmq-plugins enable rabbitmq_sharding");
        assertThat(setup.isDone()).isFalse();

        assertThat(setup.ensure()).isTrue();
        assertThat(setup.problem()).isNull();
    }

    @Test
    void anUnreachableBrokerIsRetriedAndASucceededSetupIsNotRepeated() {
        doThrow(new AmqpConnectException(new IOException("Connection refused"))).doNothing()
                .when(admin).declareExchange(any(Exchange.class));
        BrokerSetup setup = new BrokerSetup(admin, unusedManagement, "v", settings(false), BrokerUsers.ADMINISTRATOR);

        assertThat(setup.ensure()).isFalse();
        assertThat(setup.problem()).contains("Connection refused").contains("'v'");
        assertThat(setup.ensure()).isTrue();
        assertThat(setup.ensure()).isTrue();

        // 1 failed attempt + 4 exchanges (2 sharded, ingress, dead letter) declared once.
        verify(admin, times(5)).declareExchange(any(Exchange.class));
    }

    @Test
    void policiesThatCannotBeSetKeepTheSetupPending() {
        doNothing().when(admin).declareExchange(any(Exchange.class));
        BrokerSetup setup = new BrokerSetup(admin, unusedManagement, "/", settings(true), BrokerUsers.ADMINISTRATOR);

        assertThat(setup.ensure()).isFalse();
        assertThat(setup.problem()).contains("management API");
        verify(admin, times(4)).declareExchange(any(Exchange.class));
    }

    @Test
    void aServiceThatMayNotDeclareWaitsForTheDeploymentsQueuesAndDeclaresNothing() {
        BrokerSettings settings = new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1),
                null, 0, false);
        when(admin.getQueueInfo(any(String.class))).thenReturn(null).thenReturn(new QueueInformation("q", 0, 0));
        when(admin.getRabbitTemplate()).thenReturn(mock(RabbitTemplate.class));
        BrokerSetup setup = new BrokerSetup(admin, unusedManagement, "v", settings, BrokerUsers.STORE_SERVICE);

        assertThat(setup.ensure()).isFalse();
        assertThat(setup.problem()).contains("does not exist in vhost 'v'").contains("platform.broker.declare=false");
        // The management API is unreachable here: no policy was attempted either.
        assertThat(setup.ensure()).isTrue();

        // What store-service reads (the query queue; the sharded mode's shard queues come from the plugin), no more.
        verify(admin, times(2)).getQueueInfo(Topology.STORE_RPC_QUEUE);
        verify(admin, never()).getQueueInfo(Topology.PARKING_QUEUE);

        verify(admin, never()).declareExchange(any(Exchange.class));
        verify(admin, never()).declareQueue(any(Queue.class));
        verify(admin, never()).declareBinding(any(Binding.class));
    }
}
