package com.supermarket.broker;

import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/** How a delivery whose listener threw is settled (the container leaves it to the listener in manual-ack mode). */
class ShardConsumersTest {

    private final Channel channel = mock(Channel.class);
    private final ChannelAwareMessageListener failing = ShardConsumers.settlingFailures((message, channel) -> {
        throw new IllegalStateException("a bug");
    });

    ShardConsumersTest() {
        when(channel.isOpen()).thenReturn(true);
    }

    @Test
    void aFirstFailureRequeuesThatDeliveryAlone() throws Exception {
        failing.onMessage(delivery(7, false), channel);

        verify(channel).basicNack(7, false, true);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
    }

    @Test
    void aFailureOfARedeliveryRejectsItToTheDeadLetterExchange() throws Exception {
        failing.onMessage(delivery(7, true), channel);

        verify(channel).basicReject(7, false);
        verify(channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
    }

    @Test
    void aDeliveryThatCannotBeSettledAbortsItsChannel() throws Exception {
        doThrow(new IOException("channel failed")).when(channel).basicNack(7, false, true);

        failing.onMessage(delivery(7, false), channel);

        verify(channel).abort();
    }

    private static Message delivery(long tag, boolean redelivered) {
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryTag(tag);
        properties.setRedelivered(redelivered);
        properties.setConsumerQueue("sharding: stores - rabbit@node - 0");
        return new Message(new byte[0], properties);
    }
}
