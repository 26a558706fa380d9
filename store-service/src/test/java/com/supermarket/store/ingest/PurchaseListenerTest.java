package com.supermarket.store.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.rabbitmq.client.Channel;
import com.supermarket.broker.MessageTracing;
import com.supermarket.broker.Parking;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

class PurchaseListenerTest {

    private record Acknowledged(Channel channel, long deliveryTag, List<Purchase> counted) {
    }

    @Test
    void isHandedTheChannelTheMessageCameOnNotTheCachingProxy() throws Exception {
        List<Acknowledged> acknowledged = new ArrayList<>();
        PurchaseListener listener = new PurchaseListener(new StoreCounts(10, 1000, 100),
                (channel, tag, counted) -> acknowledged.add(new Acknowledged(channel, tag, counted)),
                new Parking(mock(ConnectionFactory.class)), new StorePartition(0, 1), MessageTracing.OFF, new SimpleMeterRegistry());
        Channel delivering = mock(Channel.class);
        ChannelProxy proxy = mock(ChannelProxy.class);
        when(proxy.getTargetChannel()).thenReturn(delivering);
        Purchase purchase = new Purchase(UUID.randomUUID(), 3, 3000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(7, 2)), Instant.parse("2021-01-01T10:00:00Z"));
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryTag(9);
        properties.setType(PurchaseBatch.MESSAGE_TYPE);

        ShardConsumers.onDeliveringChannel(listener)
                .onMessage(new Message(PurchaseBatch.frame(List.of(WireFormat.encode(purchase))), properties), proxy);

        assertThat(acknowledged).containsExactly(new Acknowledged(delivering, 9, List.of(purchase)));
    }

    @Test
    void aPurchaseOfAnotherPartitionsStoreIsParkedAndItsNeighboursCounted() throws Exception {
        List<Acknowledged> acknowledged = new ArrayList<>();
        StoreCounts counts = new StoreCounts(10, 1000, 100);
        Parking parking = mock(Parking.class);
        PurchaseListener listener = new PurchaseListener(counts,
                (channel, tag, counted) -> acknowledged.add(new Acknowledged(channel, tag, counted)),
                parking, new StorePartition(0, 2), MessageTracing.OFF, new SimpleMeterRegistry());
        Purchase own = purchaseAt(4);
        Purchase foreign = purchaseAt(3);
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryTag(5);
        properties.setType(PurchaseBatch.MESSAGE_TYPE);
        Channel channel = mock(Channel.class);

        listener.onMessage(new Message(PurchaseBatch.frame(List.of(WireFormat.encode(own), WireFormat.encode(foreign))),
                properties), channel);

        ArgumentCaptor<PurchaseBatch.Poison> parked = ArgumentCaptor.forClass(PurchaseBatch.Poison.class);
        verify(parking).park(parked.capture(), any(), any());
        assertThat(parked.getValue().reason()).contains("store 3 belongs to store partition 1", "store partition 0 of 2");
        assertThat(acknowledged).containsExactly(new Acknowledged(channel, 5, List.of(own)));
        assertThat(counts.count(3, 7)).isZero();
        assertThat(counts.count(4, 7)).isEqualTo(2);
    }

    private static Purchase purchaseAt(int store) {
        return new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(7, 2)), Instant.parse("2021-01-01T10:00:00Z"));
    }
}
