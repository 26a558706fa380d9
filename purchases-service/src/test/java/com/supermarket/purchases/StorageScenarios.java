package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;

/**
 * The end-to-end behaviour every storage profile must show, against the real broker (a
 * throw-away vhost) and the real backend: publish to the ingress exchange, read back through
 * the service's HTTP lookup. Subclasses provide the backend and a way to take it away.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class StorageScenarios {

    private static final Duration PATIENCE = Duration.ofSeconds(90);

    protected TestBroker broker;
    protected PurchasesServiceRunner service;

    abstract String profile();

    /** Starts (or creates) the backend and returns the properties that point the service at it. */
    abstract Map<String, String> startBackend() throws Exception;

    abstract void stopBackend() throws Exception;

    /** Takes the backend away, as an outage would. */
    abstract void makeStoreUnavailable() throws Exception;

    /** Brings the backend back with its data. */
    abstract void restoreStore() throws Exception;

    @BeforeAll
    void startService() throws Exception {
        broker = TestBroker.create("purchases-" + profile());
        try {
            service = new PurchasesServiceRunner(profile(), broker, startBackend());
        } catch (Exception | Error e) {
            broker.close();
            throw e;
        }
    }

    @AfterAll
    void stopService() throws Exception {
        try {
            if (service != null) {
                service.close();
            }
            stopBackend();
        } finally {
            broker.close();
        }
    }

    /** 300 messages over every shard queue, written in groups across the shards. */
    @Test
    void everyPublishedPurchaseIsStoredExactlyOnceWithItsItemsAndAcknowledged() {
        long before = service.storedCount();
        List<Purchase> purchases = TestPurchases.random(300);
        assertThat(broker.shardQueues(Topology.PURCHASE_EXCHANGE)).as("shard queues").hasSizeGreaterThan(1);

        TestPurchases.publish(broker, purchases);

        await().atMost(PATIENCE).until(() -> service.storedCount() == before + purchases.size());
        for (Purchase purchase : purchases) {
            assertThat(service.find(purchase.purchaseId())).isEqualTo(purchase);
        }
        assertThat(broker.messageCountBehind(Topology.PURCHASE_EXCHANGE)).isZero();
        await("every message acknowledged").atMost(PATIENCE).until(() -> inFlight() == 0);
        assertThat(service.prometheus()).contains("purchases_stored_total", "purchases_batch_size_purchases_count",
                "purchases_write_seconds_count", "purchases_duplicates_total");
    }

    @Test
    void aPurchaseDeliveredTwiceIsStoredOnce() {
        long before = service.storedCount();
        double duplicatesBefore = service.counter("purchases.duplicates");
        double writtenBefore = service.purchasesWritten();
        Purchase twice = TestPurchases.atStore(7);
        Purchase other = TestPurchases.atStore(7);

        TestPurchases.publish(broker, List.of(twice));
        await().atMost(PATIENCE).until(() -> service.find(twice.purchaseId()) != null);
        TestPurchases.publish(broker, List.of(twice, other, twice));

        await("all four deliveries written").atMost(PATIENCE)
                .until(() -> service.purchasesWritten() >= writtenBefore + 4);
        assertThat(service.storedCount()).isEqualTo(before + 2);
        assertThat(service.find(twice.purchaseId())).isEqualTo(twice);
        assertThat(service.find(other.purchaseId())).isEqualTo(other);
        assertThat(service.counter("purchases.duplicates")).isGreaterThanOrEqualTo(duplicatesBefore + 2);
    }

    @Test
    void aSecondBodyUnderAStoredPurchaseIdLeavesTheFirstIntact() {
        Purchase first = TestPurchases.atStore(8);
        Purchase second = new Purchase(first.purchaseId(), first.storeId(), first.customerId() + 1, first.date(),
                List.of(new PurchaseItem(4242, 3), new PurchaseItem(4343, 1), new PurchaseItem(4444, 2)), first.acceptedAt());
        Purchase marker = TestPurchases.atStore(8);

        TestPurchases.publish(broker, List.of(first));
        await().atMost(PATIENCE).until(() -> service.find(first.purchaseId()) != null);
        // Same store, same shard queue: once the marker is stored, the second body was written too.
        TestPurchases.publish(broker, List.of(second, marker));
        await().atMost(PATIENCE).until(() -> service.find(marker.purchaseId()) != null);

        assertThat(service.find(first.purchaseId())).isEqualTo(first);
    }

    @Test
    void aPoisonPurchaseInsideABatchIsParkedAloneAndItsNeighboursAreStored() {
        Purchase before = TestPurchases.atStore(5);
        Purchase after = TestPurchases.atStore(5);
        byte[] poison = "{\"purchaseId\":\"not-a-uuid\",\"storeId\":5}".getBytes(StandardCharsets.UTF_8);
        long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);

        TestPurchases.publishBatch(broker, "5", List.of(WireFormat.encode(before), poison, WireFormat.encode(after)));

        await().atMost(PATIENCE).until(() -> service.find(before.purchaseId()) != null && service.find(after.purchaseId()) != null);
        await().atMost(PATIENCE).until(() -> broker.messageCount(Topology.PARKING_QUEUE) == parkedBefore + 1);
        assertThat(service.find(before.purchaseId())).isEqualTo(before);
        assertThat(service.find(after.purchaseId())).isEqualTo(after);
        assertThat(parkedBodies()).contains(new String(poison, StandardCharsets.UTF_8));
    }

    @Test
    void aBatchDeliveredTwiceIsStoredExactlyOnce() {
        long before = service.storedCount();
        double writtenBefore = service.purchasesWritten();
        List<Purchase> batch = IntStream.range(0, 40).mapToObj(i -> TestPurchases.atStore(9)).toList();
        byte[] body = PurchaseBatch.frame(batch.stream().map(WireFormat::encode).toList());

        TestPurchases.publishBatchBody(broker, "9", body);
        TestPurchases.publishBatchBody(broker, "9", body);

        await("both deliveries written").atMost(PATIENCE).until(() -> service.purchasesWritten() >= writtenBefore + 80);
        assertThat(service.storedCount()).isEqualTo(before + 40);
        for (Purchase purchase : batch) {
            assertThat(service.find(purchase.purchaseId())).isEqualTo(purchase);
        }
    }

    @Test
    void anUnreadableBatchIsParkedWhole() {
        long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);
        byte[] garbage = "{\"version\":1,\"purchases\":".getBytes(StandardCharsets.UTF_8);

        TestPurchases.publishBatchBody(broker, "4", garbage);

        await().atMost(PATIENCE).until(() -> broker.messageCount(Topology.PARKING_QUEUE) == parkedBefore + 1);
        assertThat(parkedBodies()).contains(new String(garbage, StandardCharsets.UTF_8));
    }

    @Test
    void aMessageOfOnePoisonPurchaseIsParkedAndTheNextOneIsStored() {
        Purchase good = TestPurchases.atStore(3);
        long parkedBefore = broker.messageCount(Topology.PARKING_QUEUE);

        TestPurchases.publishRaw(broker, List.of("3", "3"), List.of("poison", good.purchaseId().toString()),
                List.of("{\"purchaseId\":\"not-a-uuid\"}".getBytes(), WireFormat.encode(good)));

        await().atMost(PATIENCE).until(() -> broker.messageCount(Topology.PARKING_QUEUE) == parkedBefore + 1);
        await().atMost(PATIENCE).until(() -> service.find(good.purchaseId()) != null);
        assertThat(service.counter("purchases.poison")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void purchasesPublishedDuringAnOutageAreAllStoredAfterRecovery() throws Exception {
        long before = service.storedCount();
        List<Purchase> purchases = TestPurchases.random(400);
        List<Purchase> firstHalf = purchases.subList(0, 200);
        List<Purchase> secondHalf = purchases.subList(200, 400);
        TestPurchases.publish(broker, firstHalf);
        await().atMost(PATIENCE).until(() -> service.storedCount() > before);

        makeStoreUnavailable();
        try {
            TestPurchases.publish(broker, secondHalf);
            await("readiness DOWN while the store is unavailable").atMost(PATIENCE)
                    .until(() -> service.readinessStatus() == 503);
            assertThat(service.livenessStatus()).as("liveness is not about dependencies").isEqualTo(200);
            await("purchases wait in the broker, ready or held unacknowledged").atMost(PATIENCE)
                    .until(() -> broker.messageCountBehind(Topology.PURCHASE_EXCHANGE) + inFlight() > 0);
        } finally {
            restoreStore();
        }

        await("every purchase stored after recovery").atMost(PATIENCE)
                .until(() -> service.storedCount() == before + purchases.size());
        await("readiness UP again").atMost(PATIENCE).until(() -> service.readinessStatus() == 200);
        List<Purchase> missing = new ArrayList<>();
        for (Purchase purchase : purchases) {
            if (!purchase.equals(service.find(purchase.purchaseId()))) {
                missing.add(purchase);
            }
        }
        assertThat(missing).as("purchases not stored as published").isEmpty();
        assertThat(service.counter("purchases.write.failures")).as("writes failed during the outage").isPositive();
    }

    /** The bodies in the parking queue, read without consuming them (requeued). */
    private List<String> parkedBodies() {
        String path = "api/queues/" + URLEncoder.encode(broker.vhost(), StandardCharsets.UTF_8) + "/"
                + URLEncoder.encode(Topology.PARKING_QUEUE, StandardCharsets.UTF_8) + "/get";
        byte[] request = "{\"count\":100,\"ackmode\":\"ack_requeue_true\",\"encoding\":\"auto\"}".getBytes(StandardCharsets.UTF_8);
        List<String> bodies = new ArrayList<>();
        for (JsonNode message : WireFormat.mapper().readTree(broker.management().send("POST", path, request))) {
            bodies.add(message.path("payload").asString());
        }
        return bodies;
    }

    /** Messages delivered to the consumers but not acknowledged (held while the store is down). */
    private long inFlight() {
        Map<String, Long> unacknowledged = TestServices.queueCounts(broker.vhost(), "messages_unacknowledged");
        return broker.shardQueues(Topology.PURCHASE_EXCHANGE).stream()
                .mapToLong(queue -> unacknowledged.getOrDefault(queue, 0L)).sum();
    }
}
