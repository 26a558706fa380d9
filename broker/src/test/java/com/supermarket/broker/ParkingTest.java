package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

class ParkingTest {

    private static final PurchaseBatch.Poison POISON =
            new PurchaseBatch.Poison("{\"purchaseId\":\"nope\"}".getBytes(StandardCharsets.UTF_8), "not a purchase");

    private final Channel channel = mock(Channel.class);
    private final com.rabbitmq.client.Connection amqpConnection = mock(com.rabbitmq.client.Connection.class);
    private final Parking parking = new Parking(publishing());

    private ConnectionFactory publishing() {
        Connection connection = mock(Connection.class);
        when(connection.createChannel(false)).thenReturn(channel);
        when(connection.getDelegate()).thenReturn(amqpConnection);
        ConnectionFactory factory = mock(ConnectionFactory.class);
        when(factory.createConnection()).thenReturn(connection);
        return factory;
    }

    @BeforeEach
    void aNewChannel() {
        when(channel.getNextPublishSeqNo()).thenReturn(0L);
    }

    @Test
    void publishesOnAChannelOfThePublishingConnectionAndWaitsForTheConfirm() throws Exception {
        when(channel.waitForConfirms(anyLong())).thenReturn(true);

        parking.park(POISON, "shard", Duration.ofSeconds(1));

        verify(channel).confirmSelect();
        verify(channel).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), eq(POISON.json()));
        verify(channel).waitForConfirms(1_000);
        verify(channel).close();
        verify(amqpConnection, never()).abort(anyInt());
    }

    @Test
    void aChannelInConfirmModeAlreadyIsNotAskedAgain() throws Exception {
        when(channel.getNextPublishSeqNo()).thenReturn(7L);
        when(channel.waitForConfirms(anyLong())).thenReturn(true);

        parking.park(POISON, "shard", Duration.ofSeconds(1));

        verify(channel, never()).confirmSelect();
    }

    @Test
    void aParkNotConfirmedInTimeFailsAndDropsThePublishingConnection() throws Exception {
        when(channel.waitForConfirms(anyLong())).thenThrow(new TimeoutException());

        assertThatThrownBy(() -> parking.park(POISON, "shard", Duration.ofSeconds(1)))
                .isInstanceOf(IOException.class).hasMessageContaining("did not confirm");

        verify(amqpConnection).abort(anyInt());
    }

    @Test
    void aRefusedParkFailsAndDropsThePublishingConnection() throws Exception {
        when(channel.waitForConfirms(anyLong())).thenReturn(false);

        assertThatThrownBy(() -> parking.park(POISON, "shard", Duration.ofSeconds(1)))
                .isInstanceOf(IOException.class).hasMessageContaining("refused");

        verify(amqpConnection).abort(anyInt());
    }

    /** The caller's own channel closing means something else to it (its deliveries come back). */
    @Test
    void thePublishingChannelClosingIsAnIOExceptionNotTheCallersShutdown() throws Exception {
        when(channel.waitForConfirms(anyLong())).thenThrow(new ShutdownSignalException(false, false, null, null));

        assertThatThrownBy(() -> parking.park(POISON, "shard", Duration.ofSeconds(1)))
                .isInstanceOf(IOException.class).hasCauseInstanceOf(ShutdownSignalException.class);

        verify(amqpConnection).abort(anyInt());
    }
}
