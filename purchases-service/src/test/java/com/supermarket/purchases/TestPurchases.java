package com.supermarket.purchases;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/** Builds purchases like purchase-api would and publishes them to the ingress exchange, with confirms. */
final class TestPurchases {

    private TestPurchases() {
    }

    static List<Purchase> random(int count) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<Purchase> purchases = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int store = random.nextInt(1, 65);
            purchases.add(atStore(store));
        }
        return purchases;
    }

    static Purchase atStore(int store) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<PurchaseItem> items = new ArrayList<>();
        for (int line = random.nextInt(1, 6); line > 0; line--) {
            items.add(new PurchaseItem(random.nextInt(1, 100_001), random.nextInt(1, 4)));
        }
        // Millisecond precision: what every backend keeps exactly.
        return new Purchase(UUID.randomUUID(), store, store * 1000 + random.nextInt(1000),
                LocalDate.of(2021, 1, 1).plusDays(random.nextInt(365)), items,
                Instant.now().truncatedTo(ChronoUnit.MILLIS));
    }

    static void publish(TestBroker broker, List<Purchase> purchases) {
        publish(broker.newConnection(), purchases);
    }

    /** Publishes over {@code connection} (any broker, e.g. a cluster node) and closes it. */
    static void publish(Connection connection, List<Purchase> purchases) {
        publish(connection, Topology.INGRESS_EXCHANGE, purchases);
    }

    /** Publishes to {@code exchange} with the routing keys the ingress would get, and closes {@code connection}. */
    static void publish(Connection connection, String exchange, List<Purchase> purchases) {
        List<byte[]> bodies = purchases.stream().map(p -> PurchaseBatch.frame(List.of(WireFormat.encode(p)))).toList();
        publish(connection, exchange, PurchaseBatch.MESSAGE_TYPE, purchases.stream().map(p -> Integer.toString(p.storeId())).toList(),
                purchases.stream().map(p -> p.purchaseId().toString()).toList(), bodies);
    }

    /** One batch message per raw purchase element, each holding that element alone. */
    static void publishRaw(TestBroker broker, List<String> routingKeys, List<String> messageIds, List<byte[]> elements) {
        publish(broker.newConnection(), Topology.INGRESS_EXCHANGE, PurchaseBatch.MESSAGE_TYPE, routingKeys, messageIds,
                elements.stream().map(element -> PurchaseBatch.frame(List.of(element))).toList());
    }

    /** One batch message ({@link PurchaseBatch#MESSAGE_TYPE}) framed from raw purchase elements. */
    static void publishBatch(TestBroker broker, String routingKey, List<byte[]> elements) {
        publishBatchBody(broker, routingKey, PurchaseBatch.frame(elements));
    }

    /** One message of type {@link PurchaseBatch#MESSAGE_TYPE} with exactly this body. */
    static void publishBatchBody(TestBroker broker, String routingKey, byte[] body) {
        publishBatchBody(broker.newConnection(), Topology.INGRESS_EXCHANGE, routingKey, body);
    }

    /** One message of type {@link PurchaseBatch#MESSAGE_TYPE} with exactly this body, to {@code exchange}. */
    static void publishBatchBody(Connection connection, String exchange, String routingKey, byte[] body) {
        publish(connection, exchange, PurchaseBatch.MESSAGE_TYPE, List.of(routingKey), List.of(UUID.randomUUID().toString()),
                List.of(body));
    }

    private static void publish(Connection opened, String exchange, String type, List<String> routingKeys,
                                List<String> messageIds, List<byte[]> bodies) {
        try (Connection connection = opened; Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int i = 0; i < bodies.size(); i++) {
                AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().type(type)
                        .contentType(WireFormat.CONTENT_TYPE).deliveryMode(2).messageId(messageIds.get(i)).build();
                channel.basicPublish(exchange, routingKeys.get(i), properties, bodies.get(i));
            }
            channel.waitForConfirmsOrDie(30_000);
        } catch (Exception e) {
            throw new IllegalStateException("publishing test purchases failed", e);
        }
    }
}
