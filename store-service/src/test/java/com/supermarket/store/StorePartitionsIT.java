package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StorePartition;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two store-service partitions as separate processes from the built jar, each with its own state
 * directory, on the real broker (sharded mode, 4 shard queues): purchases published as
 * purchase-api publishes them are each counted by the partition owning their store and by no
 * other, each partition answers on its own query queue for its stores only, and its top stores
 * for an item are the brute-force ranking of its stores.
 */
class StorePartitionsIT {

    private static final int SHARDS = 4;
    private static final int PARTITIONS = 2;
    private static final int STORES = 16;
    private static final int ITEMS = 20;
    private static final int PURCHASES = 300;

    @TempDir
    Path stateDirs;

    private final TestBroker broker = TestBroker.create("store-partitions");
    private final List<ServiceProcess> partitions = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (ServiceProcess partition : partitions) {
            partition.close();
        }
        broker.close();
    }

    @Test
    void everyStoreIsCountedAndAnsweredByTheOnePartitionOwningIt() throws Exception {
        broker.applyTopology(SHARDS);
        for (int partition = 0; partition < PARTITIONS; partition++) {
            ServiceProcess service = new ServiceProcess(broker, Map.of(
                    "BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS),
                    "STORE_PARTITIONS", Integer.toString(PARTITIONS),
                    "STORE_PARTITION_INDEX", Integer.toString(partition),
                    "PLATFORM_MAX_STORES", Integer.toString(STORES),
                    "PLATFORM_MAX_ITEM_ID", Integer.toString(ITEMS),
                    "STORE_DURABILITY_STATE_DIR", stateDirs.resolve("p" + partition).toString()), "-Xmx256m", "-XX:TieredStopAtLevel=1");
            partitions.add(service);
            service.start("partitions-it-store-service-p" + partition);
        }
        for (ServiceProcess service : partitions) {
            service.awaitReady(Duration.ofSeconds(90));
        }

        Map<Integer, Map<Integer, Long>> published = new HashMap<>();
        Random random = new Random(37);
        try (Connection connection = broker.newConnection()) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            for (int i = 0; i < PURCHASES; i++) {
                int store = 1 + random.nextInt(STORES);
                PurchaseItem item = new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(3));
                Purchase purchase = new Purchase(UUID.randomUUID(), store, 1, LocalDate.of(2021, 1, 1), List.of(item),
                        Instant.now());
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(store, SHARDS),
                        new AMQP.BasicProperties.Builder().contentType(WireFormat.CONTENT_TYPE).deliveryMode(2)
                                .type(PurchaseBatch.MESSAGE_TYPE).build(),
                        PurchaseBatch.frame(List.of(WireFormat.encode(purchase))));
                published.computeIfAbsent(store, s -> new HashMap<>()).merge(item.itemId(), (long) item.quantity(), Long::sum);
            }
            channel.waitForConfirmsOrDie(10_000);

            await("every purchase counted by its partition").atMost(Duration.ofSeconds(60))
                    .until(() -> partitions.get(0).metric("store_purchases_counted")
                            + partitions.get(1).metric("store_purchases_counted") >= PURCHASES);
            for (int partition = 0; partition < PARTITIONS; partition++) {
                StorePartition owner = new StorePartition(partition, PARTITIONS);
                try (RpcClient rpc = new RpcClient(connection, owner.queryQueue())) {
                    long ownPurchases = 0;
                    for (int store = 1; store <= STORES; store++) {
                        StoreQueryReply reply = rpc.query(Kind.TOP_ITEMS_AT_STORE, store, ITEMS);
                        if (owner.owns(store)) {
                            assertThat(asMap(reply.entries())).as("store %d at its %s", store, owner)
                                    .isEqualTo(published.getOrDefault(store, Map.of()));
                            ownPurchases += published.getOrDefault(store, Map.of()).size() > 0 ? 1 : 0;
                        } else {
                            assertThat(reply.status()).as("store %d asked of %s", store, owner)
                                    .isEqualTo(StoreQueryReply.Status.BAD_REQUEST);
                        }
                    }
                    assertThat(ownPurchases).as("stores with sales in %s", owner).isPositive();
                    for (int item = 1; item <= ITEMS; item++) {
                        assertThat(rpc.query(Kind.TOP_STORES_FOR_ITEM, item, STORES).entries())
                                .as("top stores for item %d at %s", item, owner)
                                .isEqualTo(bruteForceTopStores(published, item, owner));
                    }
                }
                assertThat(partitions.get(partition).metric("store_purchases_rejected_total")).as("parked by %s", owner)
                        .isZero();
            }
        }
        assertThat(broker.messageCountBehind(Topology.STORE_EXCHANGE)).as("left in the shard queues").isZero();
    }

    private static Map<Integer, Long> asMap(List<Ranked> entries) {
        Map<Integer, Long> counts = new HashMap<>();
        for (Ranked ranked : entries) {
            counts.put(ranked.id(), ranked.quantity());
        }
        return counts;
    }

    /** The partition's stores that sold {@code item}, most first, ties by lower store id. */
    private static List<Ranked> bruteForceTopStores(Map<Integer, Map<Integer, Long>> published, int item, StorePartition owner) {
        return published.entrySet().stream()
                .filter(store -> owner.owns(store.getKey()) && store.getValue().containsKey(item))
                .map(store -> new Ranked(store.getKey(), store.getValue().get(item)))
                .sorted(Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id))
                .toList();
    }
}
