package com.supermarket.purchases.ingest;

import static com.supermarket.purchases.ingest.FakeRepository.purchaseAt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import com.supermarket.broker.MessageTracing;
import com.supermarket.broker.Parking;
import com.supermarket.broker.ShardConsumers;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.purchases.storage.PurchaseRepository;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The ingest path of one service: the listener decodes, the {@link GroupWriter} stores through a
 * real {@link BatchWriter} (over an in-memory store that fails on demand) and settles, parks go
 * to a mocked publishing channel. Settling is asynchronous: each outcome is awaited.
 */
class PurchaseBatchListenerTest {

    /** How long an asynchronous outcome is awaited. */
    private static final int PATIENCE_MILLIS = 5_000;

    private final FakeRepository repository = new FakeRepository();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StorageState state = new StorageState();
    private final IngestProperties properties =
            new IngestProperties(1, 10, Duration.ofMillis(1), 40, Duration.ofMillis(1), Duration.ofMillis(4), 3);
    private final BatchWriter writer = new BatchWriter(repository, state, properties, registry);
    private final GroupWriter groupWriter = new GroupWriter(writer, properties, registry);
    /** The channel of the publishing connection, where parking publishes. */
    private final Channel publishing = publishingChannel();
    private final PurchaseBatchListener listener =
            new PurchaseBatchListener(groupWriter, parkingOn(publishing), MessageTracing.OFF, registry);
    private final Channel channel = mock(Channel.class);

    @BeforeEach
    void start() {
        groupWriter.start();
    }

    @AfterEach
    void stop() {
        groupWriter.stop();
    }

    @Test
    void storesEveryPurchaseOfABatchThenAcknowledgesItWithAMultipleAck() throws Exception {
        Purchase first = purchaseAt(1);
        Purchase second = purchaseAt(2);

        listener.onMessage(batch(5, WireFormat.encode(first), WireFormat.encode(second)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(5, true);
        assertThat(repository.stored).containsOnlyKeys(first.purchaseId(), second.purchaseId());
        assertThat(repository.batches).containsExactly(2);
        assertThat(registry.counter("purchases.stored").count()).isEqualTo(2);
    }

    @Test
    void acknowledgesOnTheChannelTheMessageCameOnNotThroughTheCachingProxy() throws Exception {
        ChannelProxy proxy = mock(ChannelProxy.class);
        when(proxy.getTargetChannel()).thenReturn(channel);

        ShardConsumers.onDeliveringChannel(listener).onMessage(batch(5, WireFormat.encode(purchaseAt(1))), proxy);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(5, true);
        verify(proxy, never()).basicAck(anyLong(), anyBoolean());
    }

    @Test
    void leavesAMessageWhoseChannelClosedWhileItWasStoredToTheBroker() throws Exception {
        Purchase stored = purchaseAt(1);
        doThrow(new AlreadyClosedException(new ShutdownSignalException(true, false, null, null)))
                .when(channel).basicAck(anyLong(), anyBoolean());

        listener.onMessage(batch(5, WireFormat.encode(stored)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(5, true);
        assertThat(repository.stored).containsOnlyKeys(stored.purchaseId());
        verify(channel, never()).basicNack(anyLong(), anyBoolean(), anyBoolean());
        assertThat(registry.counter("purchases.errors").count()).as("not an error of the message").isZero();
        assertThat(groupWriter.unsettled()).as("the closed channel's deliveries forgotten").isZero();
    }

    @Test
    void parksAPoisonPurchaseAloneWithAConfirmAndStoresItsNeighbours() throws Exception {
        Purchase before = purchaseAt(1);
        Purchase after = purchaseAt(2);
        byte[] poison = "{\"purchaseId\":\"nope\"}".getBytes(StandardCharsets.UTF_8);

        listener.onMessage(batch(8, WireFormat.encode(before), poison, WireFormat.encode(after)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(8, true);
        assertThat(repository.stored).containsOnlyKeys(before.purchaseId(), after.purchaseId());
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(new String(parked.getValue(), StandardCharsets.UTF_8)).isEqualTo(new String(poison, StandardCharsets.UTF_8));
        verify(publishing).waitForConfirms(anyLong());
        verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());
        verify(channel, never()).basicReject(anyLong(), anyBoolean());
        assertThat(registry.counter("purchases.poison", "kind", "purchase").count()).isEqualTo(1);
    }

    @Test
    void rejectsAWhollyUnreadableMessageWithoutRequeue() throws Exception {
        listener.onMessage(new Message("{\"version\":1,\"purchases\":".getBytes(), properties(7, PurchaseBatch.MESSAGE_TYPE)),
                channel);

        verify(channel).basicReject(7, false);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        assertThat(repository.attempts.get()).isZero();
        assertThat(registry.counter("purchases.poison", "kind", "message").count()).isEqualTo(1);
    }

    @Test
    void holdsTheMessageUnacknowledgedWhileTheStoreIsDownAndAcksAfterItReturns() throws Exception {
        repository.failuresBeforeRecovery.set(3);
        Purchase purchase = purchaseAt(1);

        listener.onMessage(batch(1, WireFormat.encode(purchase)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        assertThat(repository.attempts.get()).isEqualTo(4);
        assertThat(repository.stored).containsKey(purchase.purchaseId());
        assertThat(state.failure()).isNull();
        assertThat(registry.counter("purchases.write.failures", "fault", "store").count()).isEqualTo(3);
    }

    @Test
    void parksOnlyThePurchaseTheStoreRefusesForGood() throws Exception {
        Purchase refused = purchaseAt(666);
        Purchase fine = purchaseAt(2);
        repository.refusedStore = 666;

        listener.onMessage(batch(1, WireFormat.encode(refused), WireFormat.encode(fine)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        assertThat(repository.stored).containsOnlyKeys(fine.purchaseId());
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(WireFormat.decode(parked.getValue(), Purchase.class)).isEqualTo(refused);
        verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());
    }

    @Test
    void aPurchaseFailingWithAnUnknownErrorIsParkedOnceItsNeighboursAreStored() throws Exception {
        Purchase bad = purchaseAt(777);
        Purchase fine = purchaseAt(2);
        Purchase alsoFine = purchaseAt(3);
        repository.unknownForStore = 777;

        listener.onMessage(batch(1, WireFormat.encode(bad), WireFormat.encode(fine), WireFormat.encode(alsoFine)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        assertThat(repository.stored).containsOnlyKeys(fine.purchaseId(), alsoFine.purchaseId());
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(WireFormat.decode(parked.getValue(), Purchase.class)).isEqualTo(bad);
        assertThat(registry.counter("purchases.write.failures", "fault", "unknown").count()).isPositive();
    }

    @Test
    void aBatchFailingAllAlikeWithAnUnknownErrorIsHeldNotParkedUntilTheStoreAcceptsIt() throws Exception {
        repository.unknownForAll = true;
        Purchase first = purchaseAt(1);
        Purchase second = purchaseAt(2);

        listener.onMessage(batch(1, WireFormat.encode(first), WireFormat.encode(second)), channel);
        await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null && repository.attempts.get() > 10);
        assertThat(state.failure().fault()).isEqualTo(PurchaseRepository.Fault.UNKNOWN);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        repository.unknownForAll = false;

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        assertThat(repository.stored).containsOnlyKeys(first.purchaseId(), second.purchaseId());
        verify(channel, never()).basicPublish(any(), any(), any(AMQP.BasicProperties.class), any());
        assertThat(state.failure()).isNull();
    }

    /**
     * With one writer no other write runs while a write is held: the purchases of the messages
     * arriving meanwhile join it, and theirs are the writes that prove the held purchase bad.
     */
    @Test
    void aLonePurchaseFailingWithAnUnknownErrorIsParkedOnceAMessageArrivingMeanwhileIsStored() throws Exception {
        Purchase bad = purchaseAt(777);
        repository.unknownForStore = 777;
        Channel otherConsumer = mock(Channel.class);

        listener.onMessage(batch(1, WireFormat.encode(bad)), channel);
        await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        Purchase arriving = purchaseAt(1);
        listener.onMessage(batch(1, WireFormat.encode(arriving)), otherConsumer);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        verify(otherConsumer, timeout(PATIENCE_MILLIS)).basicAck(1, true);
        ArgumentCaptor<byte[]> parked = ArgumentCaptor.forClass(byte[].class);
        verify(publishing).basicPublish(eq(Topology.DEAD_LETTER_EXCHANGE), eq(""), any(AMQP.BasicProperties.class), parked.capture());
        assertThat(WireFormat.decode(parked.getValue(), Purchase.class)).isEqualTo(bad);
        assertThat(repository.stored).containsOnlyKeys(arriving.purchaseId());
        assertThat(state.failure()).isNull();
    }

    @Test
    void writesAPurchaseRepeatedInsideOneBatchOnce() throws Exception {
        Purchase purchase = purchaseAt(1);

        listener.onMessage(batch(2, WireFormat.encode(purchase), WireFormat.encode(purchase)), channel);

        verify(channel, timeout(PATIENCE_MILLIS)).basicAck(2, true);
        assertThat(repository.batches).containsExactly(1);
        assertThat(registry.counter("purchases.duplicates").count()).isEqualTo(1);
    }

    @Test
    void requeuesAMessageWaitingForTheStoreWhenTheServiceStops() throws Exception {
        repository.failuresBeforeRecovery.set(Integer.MAX_VALUE);

        listener.onMessage(batch(4, WireFormat.encode(purchaseAt(1)), WireFormat.encode(purchaseAt(2))), channel);
        await().atMost(Duration.ofSeconds(5)).until(() -> state.failure() != null);
        groupWriter.stop();

        verify(channel).basicNack(4, false, true);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
    }

    @Test
    void anUnexpectedErrorRequeuesTheMessageAfterABackoffAndParksItAfterTheLastAttempt() throws Exception {
        repository.unexpected = new IllegalStateException("a bug in the store");
        Message message = batch(9, WireFormat.encode(purchaseAt(1)));

        listener.onMessage(message, channel);
        verify(channel, timeout(PATIENCE_MILLIS)).basicNack(9, false, true);
        listener.onMessage(message, channel); // the broker's redelivery
        verify(channel, timeout(PATIENCE_MILLIS).times(2)).basicNack(9, false, true);
        verify(channel, never()).basicReject(anyLong(), anyBoolean());

        listener.onMessage(message, channel);
        verify(channel, timeout(PATIENCE_MILLIS)).basicReject(9, false);
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        assertThat(registry.counter("purchases.errors").count()).isEqualTo(3);
    }

    private static Message batch(long tag, byte[]... elements) {
        return new Message(PurchaseBatch.frame(List.of(elements)), properties(tag, PurchaseBatch.MESSAGE_TYPE));
    }

    private static MessageProperties properties(long tag, String type) {
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryTag(tag);
        properties.setType(type);
        properties.setConsumerQueue("sharding: purchaseX - n - 0");
        return properties;
    }

    private static Channel publishingChannel() {
        Channel channel = mock(Channel.class);
        try {
            when(channel.waitForConfirms(anyLong())).thenReturn(true);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return channel;
    }

    /** Parking whose publishing connection hands out {@code publishing}. */
    private static Parking parkingOn(Channel publishing) {
        Connection connection = mock(Connection.class);
        when(connection.createChannel(false)).thenReturn(publishing);
        ConnectionFactory connections = mock(ConnectionFactory.class);
        when(connections.createConnection()).thenReturn(connection);
        return new Parking(connections);
    }
}
