package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.contract.Topology;
import java.net.URI;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;

class StoreCopiesTest {

    private static BrokerSettings settings(BrokerSettings.TopologyMode mode, int copies) {
        return new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1), mode, 4, null, 2,
                copies);
    }

    @Test
    void copyZeroKeepsTheStoreExchangeAndEveryOtherCopyGroupHasItsOwn() {
        assertThat(Topology.storeExchange(0)).isEqualTo(Topology.STORE_EXCHANGE);
        assertThat(Topology.storeExchange(1)).isEqualTo("storeX.c1");
        assertThat(Topology.storeExchange(12)).isEqualTo("storeX.c12");
        assertThatThrownBy(() -> Topology.storeExchange(-1)).isInstanceOf(IllegalArgumentException.class);
        // The shard queues of copy 1 are never taken for copy 0's, nor the other way round.
        assertThat("sharding: storeX.c1 - rabbit@a - 0").doesNotStartWith(Topology.shardQueuePrefix(Topology.STORE_EXCHANGE));
        assertThat("sharding: storeX - rabbit@a - 0").doesNotStartWith(Topology.shardQueuePrefix("storeX.c1"));
        assertThat("sharding: storeX.c1 - rabbit@a - 0").startsWith(Topology.shardQueuePrefix("storeX.c1"));
        assertThat(Topology.replicatedShardName("storeX.c1", 3)).isEqualTo("storeX.c1.shard.3");
    }

    @Test
    void oneCopyIsTheDefaultAndDeclaresWhatItAlwaysDid() {
        BrokerSettings unset = new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1), null,
                0, null, 0, 0);
        BrokerSettings beforeCopies = new BrokerSettings(URI.create("http://127.0.0.1:1"), 4, true, null, Duration.ofSeconds(1),
                null, 0, null, 1);

        assertThat(unset.storeCopies()).isOne();
        assertThat(beforeCopies).isEqualTo(unset);
        assertThat(unset.storeExchanges()).containsExactly(Topology.STORE_EXCHANGE);
        assertThat(unset.shardedExchanges()).isEqualTo(Topology.SHARDED_EXCHANGES);
        assertThat(BrokerTopology.declarables(unset).getDeclarables()).filteredOn(Exchange.class::isInstance)
                .map(d -> ((Exchange) d).getName()).containsExactly(Topology.PURCHASE_EXCHANGE, Topology.STORE_EXCHANGE,
                        Topology.INGRESS_EXCHANGE, Topology.DEAD_LETTER_EXCHANGE);
        assertThatThrownBy(() -> settings(null, -1)).hasMessageContaining(".store-copies must not be negative");
    }

    @Test
    void everyCopyGroupGetsItsExchangeBoundToTheIngressFanout() {
        Collection<Declarable> declarables = BrokerTopology.declarables(settings(BrokerSettings.TopologyMode.SHARDED, 2)).getDeclarables();

        assertThat(declarables).filteredOn(Exchange.class::isInstance).map(d -> (Exchange) d)
                .filteredOn(e -> e.getType().equals(Topology.SHARDING_EXCHANGE_TYPE)).extracting(Exchange::getName)
                .containsExactly(Topology.PURCHASE_EXCHANGE, "storeX", "storeX.c1");
        assertThat(declarables).filteredOn(Binding.class::isInstance).map(d -> (Binding) d)
                .filteredOn(b -> b.getExchange().equals(Topology.INGRESS_EXCHANGE)).extracting(Binding::getDestination)
                .containsExactly(Topology.PURCHASE_EXCHANGE, "storeX", "storeX.c1");
        // The copies of a partition share its query queue: one per partition, whatever the copies.
        assertThat(declarables).filteredOn(Queue.class::isInstance).map(d -> ((Queue) d).getName())
                .containsExactlyInAnyOrder(Topology.PARKING_QUEUE, "store.queries.p0", "store.queries.p1");
    }

    @Test
    void inTheReplicatedModeEveryCopyGroupGetsItsOwnQuorumShards() {
        Collection<Declarable> declarables = BrokerTopology.declarables(settings(BrokerSettings.TopologyMode.REPLICATED, 2))
                .getDeclarables();

        assertThat(declarables).filteredOn(Binding.class::isInstance).map(d -> (Binding) d)
                .filteredOn(b -> b.getExchange().equals("storeX.c1")).extracting(Binding::getDestination)
                .containsExactly("storeX.c1.shard.0", "storeX.c1.shard.1", "storeX.c1.shard.2", "storeX.c1.shard.3");
        assertThat(declarables).filteredOn(Queue.class::isInstance).map(d -> (Queue) d)
                .filteredOn(q -> q.getName().startsWith("storeX.c1.shard."))
                .allSatisfy(q -> assertThat(q.getArguments()).containsEntry("x-queue-type", "quorum")
                        .containsEntry("x-single-active-consumer", true)
                        .containsEntry("x-dead-letter-exchange", Topology.DEAD_LETTER_EXCHANGE))
                .hasSize(4);
    }

    @Test
    void storeServicesUserMayConsumeTheShardQueuesOfEveryCopyGroupAndNoOthers() {
        Pattern read = Pattern.compile(BrokerUsers.STORE_SERVICE.read());

        assertThat(List.of("storeX.shard.0", "storeX.c1.shard.11", "sharding: storeX - rabbit@a - 0",
                "sharding: storeX.c2 - rabbit@a - 3", "store.queries", "store.queries.p1"))
                .allSatisfy(queue -> assertThat(read.matcher(queue).matches()).as(queue).isTrue());
        assertThat(List.of("purchaseX.shard.0", "sharding: purchaseX - rabbit@a - 0", "storeX.cx.shard.0", "purchases.parking"))
                .allSatisfy(queue -> assertThat(read.matcher(queue).matches()).as(queue).isFalse());
        assertThat(BrokerUsers.PURCHASES_SERVICE.read()).isEqualTo("^(purchaseX\\.shard\\.[0-9]+|sharding: purchaseX - .+)$");
    }
}
