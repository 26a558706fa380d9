package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import com.supermarket.api.broker.BlockedConnectionTracker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.ConnectionBlockedEvent;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

class PurchasePublisherTest {

    private final RabbitTemplate template = mock(RabbitTemplate.class);
    private final BlockedConnectionTracker blocked = new BlockedConnectionTracker();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Purchase purchase = new Purchase(UUID.randomUUID(), 42, 42001, LocalDate.of(2021, 1, 1),
            List.of(new PurchaseItem(101, 1)), Instant.now());

    private PurchasePublisher publisher(PublishMode mode, boolean persistent) {
        return new PurchasePublisher(template, new PublishProperties(mode, persistent, Duration.ofMillis(200),
                Duration.ofSeconds(1)), blocked, registry);
    }

    /** Makes the mocked broker answer every publish with {@code broker}. */
    private void brokerAnswers(BiConsumer<Message, CorrelationData> broker) {
        doAnswer(invocation -> {
            broker.accept(invocation.getArgument(2), invocation.getArgument(3));
            return null;
        }).when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
    }

    @Test
    void publishesOnceToTheIngressAsAPersistentJsonMessageRoutedByStore() {
        brokerAnswers((message, correlation) -> correlation.getFuture().complete(new CorrelationData.Confirm(true, null)));

        publisher(PublishMode.FANOUT, true).publish(purchase);

        ArgumentCaptor<Message> message = ArgumentCaptor.forClass(Message.class);
        verify(template).send(eq(Topology.INGRESS_EXCHANGE), eq("42"), message.capture(), any(CorrelationData.class));
        assertThat(message.getValue().getMessageProperties().getDeliveryMode()).isEqualTo(MessageDeliveryMode.PERSISTENT);
        assertThat(message.getValue().getMessageProperties().getMessageId()).isEqualTo(purchase.purchaseId().toString());
        assertThat(message.getValue().getMessageProperties().getContentType()).isEqualTo("application/json");
        assertThat(message.getValue().getMessageProperties().getHeaders()).doesNotContainKey("__TypeId__");
        assertThat(WireFormat.decode(message.getValue().getBody(), Purchase.class)).isEqualTo(purchase);
        assertThat(registry.get("purchases.confirm.latency").timer().count()).isEqualTo(1);
    }

    @Test
    void publishesToEachShardedExchangeInTwiceModeAndCanBeTransient() {
        List<String> exchanges = new ArrayList<>();
        doAnswer(invocation -> {
            exchanges.add(invocation.getArgument(0));
            Message message = invocation.getArgument(2);
            assertThat(message.getMessageProperties().getDeliveryMode()).isEqualTo(MessageDeliveryMode.NON_PERSISTENT);
            ((CorrelationData) invocation.getArgument(3)).getFuture().complete(new CorrelationData.Confirm(true, null));
            return null;
        }).when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));

        publisher(PublishMode.TWICE, false).publish(purchase);

        assertThat(exchanges).containsExactly(Topology.PURCHASE_EXCHANGE, Topology.STORE_EXCHANGE);
    }

    @Test
    void aNackIsRefused() {
        brokerAnswers((message, correlation) -> correlation.getFuture().complete(new CorrelationData.Confirm(false, "disk full")));

        assertThatThrownBy(() -> publisher(PublishMode.FANOUT, true).publish(purchase))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishRefusedException.Reason.NACK))
                .hasMessageContaining("disk full");
    }

    @Test
    void aReturnedMessageIsRefusedEvenThoughTheBrokerAcked() {
        brokerAnswers((message, correlation) -> {
            correlation.setReturned(new ReturnedMessage(message, 312, "NO_ROUTE", Topology.INGRESS_EXCHANGE, "42"));
            correlation.getFuture().complete(new CorrelationData.Confirm(true, null));
        });

        assertThatThrownBy(() -> publisher(PublishMode.FANOUT, true).publish(purchase))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishRefusedException.Reason.UNROUTABLE))
                .hasMessageContaining("NO_ROUTE");
    }

    @Test
    void noConfirmInTimeIsRefused() {
        brokerAnswers((message, correlation) -> { });

        assertThatThrownBy(() -> publisher(PublishMode.FANOUT, true).publish(purchase))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishRefusedException.Reason.CONFIRM_TIMEOUT));
    }

    @Test
    void anUnreachableBrokerOrAnExhaustedChannelPoolIsRefused() {
        doThrow(new AmqpConnectException(new java.net.ConnectException("refused")))
                .when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
        assertThatThrownBy(() -> publisher(PublishMode.FANOUT, true).publish(purchase))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishRefusedException.Reason.UNREACHABLE));

        doThrow(new AmqpTimeoutException("no channel"))
                .when(template).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));
        assertThatThrownBy(() -> publisher(PublishMode.FANOUT, true).publish(purchase))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishRefusedException.Reason.CHANNELS_EXHAUSTED));
    }

    @Test
    void aBlockedConnectionIsRefusedWithoutPublishingUntilUnblocked() {
        brokerAnswers((message, correlation) -> correlation.getFuture().complete(new CorrelationData.Confirm(true, null)));
        blocked.blocked(new ConnectionBlockedEvent(mock(org.springframework.amqp.rabbit.connection.Connection.class),
                "low on memory"));

        assertThatThrownBy(() -> publisher(PublishMode.FANOUT, true).publish(purchase))
                .isInstanceOfSatisfying(PublishRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishRefusedException.Reason.BLOCKED))
                .hasMessageContaining("low on memory");
        verify(template, never()).send(anyString(), anyString(), any(Message.class), any(CorrelationData.class));

        blocked.unblocked(new org.springframework.amqp.rabbit.connection.ConnectionUnblockedEvent(
                mock(org.springframework.amqp.rabbit.connection.Connection.class)));
        publisher(PublishMode.FANOUT, true).publish(purchase);
    }
}
