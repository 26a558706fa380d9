package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The read rights of the consumers as patterns (RabbitMQ matches them as PCRE; these are plain
 * enough to read the same in Java): store-service's cover the shard queues of every copy group
 * ({@code storeX}, {@code storeX.c<n>}) in both topology modes, and nothing of purchases-service.
 * {@link BrokerUsersIT} checks the rights on a real broker.
 */
class BrokerUsersTest {

    @Test
    void storeServiceReadsTheShardQueuesOfEveryCopyGroupAndEveryPartitionsQueryQueue() {
        Pattern read = Pattern.compile(BrokerUsers.STORE_SERVICE.read());

        for (String queue : new String[] {"storeX.shard.0", "storeX.shard.11", "storeX.c1.shard.0", "storeX.c12.shard.7",
                "sharding: storeX - rabbit@node-1 - 0", "sharding: storeX.c1 - rabbit@node-1 - 3",
                "store.queries", "store.queries.p3"}) {
            assertThat(read.matcher(queue).matches()).as(queue).isTrue();
        }
        for (String queue : new String[] {"purchaseX.shard.0", "sharding: purchaseX - rabbit@node-1 - 0", "storeX.c.shard.0",
                "storeX.cx.shard.0", "storeXc1.shard.0", "storeX.c1", "storeX", "purchases.parking"}) {
            assertThat(read.matcher(queue).matches()).as(queue).isFalse();
        }
    }

    @Test
    void purchasesServiceReadsOnlyThePurchaseShardQueues() {
        Pattern read = Pattern.compile(BrokerUsers.PURCHASES_SERVICE.read());

        assertThat(read.matcher("purchaseX.shard.4").matches()).isTrue();
        assertThat(read.matcher("sharding: purchaseX - rabbit@node-1 - 0").matches()).isTrue();
        assertThat(read.matcher("purchaseX.c1.shard.0").matches()).as("copies are store-service's only").isFalse();
        assertThat(read.matcher("storeX.shard.0").matches()).isFalse();
    }
}
