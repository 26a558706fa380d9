package com.supermarket.tools.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class ManagementJsonTest {

    @Test
    void shardQueuesOfBothModesAndBothExchangesOnly() {
        String queues = """
                [{"name":"sharding: purchaseX - rabbit@host - 0","message_stats":{"publish":7}},
                 {"name":"storeX.shard.3","message_stats":{"publish":5,"deliver":5}},
                 {"name":"storeX.shard.4","message_stats":{}},
                 {"name":"purchaseXtra.shard.1","message_stats":{"publish":1}},
                 {"name":"sharding: purchaseX-other - 0","message_stats":{"publish":1}},
                 {"name":"store.rpc"}]
                """;

        assertThat(ManagementJson.shardPublished(queues)).containsExactly(
                org.assertj.core.data.MapEntry.entry("sharding: purchaseX - rabbit@host - 0", 7L),
                org.assertj.core.data.MapEntry.entry("storeX.shard.3", 5L),
                org.assertj.core.data.MapEntry.entry("storeX.shard.4", 0L));
    }

    @Test
    void messagesSumsTheQueuesThatSayAndIsEmptyWithoutAny() {
        assertThat(ManagementJson.messages("[{\"name\":\"a\",\"messages\":3},{\"name\":\"b\"},{\"name\":\"c\",\"messages\":4}]"))
                .hasValue(7);
        assertThat(ManagementJson.messages("[]")).isEmpty();
        assertThat(ManagementJson.messages("[{\"name\":\"a\"}]")).isEmpty();
    }

    @Test
    void runningNodesOfAClusterStatus() {
        assertThat(ManagementJson.runningNodes("{\"running_nodes\":[\"rabbit@sm1\",\"rabbit@sm2\"],\"disk_nodes\":[]}"))
                .containsExactly("rabbit@sm1", "rabbit@sm2");
    }

    @Test
    void mostLeadersCountsQuorumQueuesOfTheNodesNamedOnly() {
        List<String> nodes = List.of("rabbit@sm1", "rabbit@sm2", "rabbit@sm3");
        String queues = """
                [{"type":"quorum","leader":"rabbit@sm2"},{"type":"quorum","leader":"rabbit@sm3"},
                 {"type":"quorum","leader":"rabbit@sm3"},{"type":"classic","leader":"rabbit@sm1"},
                 {"type":"classic"},{"type":"classic","leader":"rabbit@sm1"},{"type":"quorum","leader":"rabbit@other"},
                 {"type":"quorum","leader":"rabbit@other"},{"type":"quorum","leader":"rabbit@other"}]
                """;

        assertThat(ManagementJson.mostLeaders(queues, nodes)).hasValue(3);
        assertThat(ManagementJson.mostLeaders("[{\"type\":\"quorum\",\"leader\":\"rabbit@sm2\"},{\"type\":\"quorum\",\"leader\":\"rabbit@sm1\"}]",
                nodes)).as("a tie goes to the first node named").hasValue(1);
        assertThat(ManagementJson.mostLeaders("[{\"type\":\"classic\",\"leader\":\"rabbit@sm1\"}]", nodes)).isEmpty();
    }

    @Test
    void connectionsByNodeThenName() {
        String connections = """
                [{"node":"rabbit@sm2","name":"127.0.0.1:5000 -> 127.0.0.1:5673","user_provided_name":"purchase-api#1"},
                 {"node":"rabbit@sm1","name":"127.0.0.1:6000 -> 127.0.0.1:5672"},
                 {"node":"rabbit@sm1","name":"127.0.0.1:5999 -> 127.0.0.1:5672","user_provided_name":"store"}]
                """;

        assertThat(ManagementJson.connections(connections)).containsExactly(
                "rabbit@sm1 127.0.0.1:5999 -> 127.0.0.1:5672 store",
                "rabbit@sm1 127.0.0.1:6000 -> 127.0.0.1:5672 ",
                "rabbit@sm2 127.0.0.1:5000 -> 127.0.0.1:5673 purchase-api#1");
    }
}
