package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.counts.StoreCounts;
import java.io.IOException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Random one-item purchases published as purchase-api would, with the counts they must produce.
 * For the tests where the link or a broker node fails under load. Not thread-safe.
 */
final class ExpectedCounts {

    private final int stores;
    private final int items;
    private final long[][] expected;
    private final Random random;

    ExpectedCounts(int stores, int items, long seed) {
        this.stores = stores;
        this.items = items;
        this.expected = new long[stores + 1][items + 1];
        this.random = new Random(seed);
    }

    /**
     * Ingest settings that keep many deliveries unacknowledged at once (a prefetch of 20, two
     * consumers per shard) while 20 x 2 x 25 purchases per shard queue, for each of up to 4 queues,
     * still fit the default dedup window (4,096 ids).
     */
    static void manyUnacknowledged(DynamicPropertyRegistry registry) {
        registry.add("store.ingest.prefetch", () -> 20);
        registry.add("store.ingest.consumers-per-shard", () -> 2);
        registry.add("store.ingest.max-purchases-per-message", () -> 25);
    }

    /** Publishes {@code count} purchases on {@code channel} (confirms are the caller's). */
    void publish(Channel channel, int count) throws IOException {
        publish(channel, Topology.INGRESS_EXCHANGE, count);
    }

    /** Publishes {@code count} purchases to {@code exchange} with their routing keys, as to the ingress. */
    void publish(Channel channel, String exchange, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            int store = 1 + random.nextInt(stores);
            int item = 1 + random.nextInt(items);
            expected[store][item]++;
            Purchase purchase = new Purchase(UUID.randomUUID(), store, store * 1000, LocalDate.of(2021, 1, 1),
                    List.of(new PurchaseItem(item, 1)), Instant.now());
            channel.basicPublish(exchange, Integer.toString(purchase.storeId()),
                    new AMQP.BasicProperties.Builder().contentType(WireFormat.CONTENT_TYPE).type(PurchaseBatch.MESSAGE_TYPE)
                            .messageId(purchase.purchaseId().toString()).deliveryMode(2).build(),
                    PurchaseBatch.frame(List.of(WireFormat.encode(purchase))));
        }
    }

    /** Asserts that {@code counts} holds exactly what was published, item by store. */
    void assertExact(StoreCounts counts) {
        for (int store = 1; store <= stores; store++) {
            for (int item = 1; item <= items; item++) {
                assertThat(counts.count(store, item)).as("store %d item %d", store, item).isEqualTo(expected[store][item]);
            }
        }
    }
}
