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
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * Two copies of one store partition as separate processes from the built jar, each with its own
 * state directory, on the real broker (sharded mode, 4 shard queues per exchange): both count
 * every purchase from their own exchange's shard queues (their summaries equal); while one is
 * down the other answers the shared query queue; the stopped copy's state directory is deleted
 * and it comes back rebuilt from the live copy's snapshot plus its own backlog, equal to the live
 * copy, nothing counted twice.
 */
class StoreCopiesIT {

    private static final int SHARDS = 4;
    private static final int STORES = 16;
    private static final int ITEMS = 20;
    private static final int PURCHASES = 200;

    @TempDir
    Path stateDirs;

    private final TestBroker broker = TestBroker.create("store-copies");
    private final HttpClient http = HttpClient.newHttpClient();
    private final Random random = new Random(41);
    private ServiceProcess first;
    private ServiceProcess second;

    @AfterEach
    void stop() throws Exception {
        for (ServiceProcess copy : new ServiceProcess[] {first, second}) {
            if (copy != null) {
                copy.close();
            }
        }
        broker.close();
    }

    @Test
    void copiesCountAlikeAndALostDiskIsRebuiltFromTheLiveCopyWithoutCountingTwice() throws Exception {
        broker.applyTopology(SHARDS);
        int firstPort = ServiceProcess.freePort();
        int secondPort = ServiceProcess.freePort();
        first = copy(0, firstPort, secondPort);
        second = copy(1, secondPort, firstPort);
        first.start("copies-it-store-service-c0");
        second.start("copies-it-store-service-c1");
        first.awaitReady(Duration.ofSeconds(90));
        second.awaitReady(Duration.ofSeconds(90));
        await("shard queues of " + Topology.storeExchange(1)).atMost(Duration.ofSeconds(30))
                .until(() -> broker.shardQueues(Topology.storeExchange(1)).size() == SHARDS);
        // A first install: both directories empty, so one copy starts from zero and the other
        // either does too or takes the first one's (empty) counts.
        assertThat(Files.readString(first.output()) + Files.readString(second.output())).contains("Starting from zero");

        try (Connection connection = broker.newConnection()) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            publish(channel, PURCHASES);
            awaitCounted(first, PURCHASES);
            awaitCounted(second, PURCHASES);
            assertThat(summary(second)).isEqualTo(summary(first).replace("\"copy\":0", "\"copy\":1"));

            second.kill();
            publish(channel, PURCHASES);
            awaitCounted(first, 2 * PURCHASES);
            try (RpcClient rpc = new RpcClient(connection, Topology.STORE_RPC_QUEUE)) {
                assertThat(rpc.query(Kind.TOP_ITEMS_AT_STORE, 1 + random.nextInt(STORES), ITEMS).status())
                        .as("answered by the live copy while the other is down").isEqualTo(StoreQueryReply.Status.OK);
            }
            FileSystemUtils.deleteRecursively(stateDirs.resolve("c1"));

            second.start("copies-it-store-service-c1");
            second.awaitReady(Duration.ofSeconds(90));
            awaitCounted(second, 2 * PURCHASES);
            String live = summary(first);
            assertThat(summary(second)).isEqualTo(live.replace("\"copy\":0", "\"copy\":1"));
            assertThat(live).contains("\"purchases\":" + 2 * PURCHASES);
            assertThat(Files.readString(second.output())).contains("Rebuilt the empty state directory");
            assertThat(second.metric("store_purchases_duplicates_total"))
                    .as("the backlog's purchases the live copy's snapshot held already").isPositive();
        }
        assertThat(broker.messageCountBehind(Topology.storeExchange(1))).as("left in copy 1's shard queues").isZero();
    }

    private ServiceProcess copy(int copy, int port, int peerPort) throws IOException {
        return new ServiceProcess(broker, Map.of(
                "BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS),
                "BROKER_RETRY_INTERVAL", "500ms",
                "STORE_COPIES", "2",
                "STORE_PARTITION_COPY", Integer.toString(copy),
                "STORE_REBUILD_PEERS", "http://127.0.0.1:" + peerPort,
                "SERVER_PORT", Integer.toString(port),
                "PLATFORM_MAX_STORES", Integer.toString(STORES),
                "PLATFORM_MAX_ITEM_ID", Integer.toString(ITEMS),
                "STORE_DURABILITY_STATE_DIR", stateDirs.resolve("c" + copy).toString()), "-Xmx256m", "-XX:TieredStopAtLevel=1");
    }

    private void publish(Channel channel, int purchases) throws Exception {
        for (int i = 0; i < purchases; i++) {
            int store = 1 + random.nextInt(STORES);
            Purchase purchase = new Purchase(UUID.randomUUID(), store, 1, LocalDate.of(2021, 1, 1),
                    List.of(new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(3))), Instant.now());
            channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(store, SHARDS),
                    new AMQP.BasicProperties.Builder().contentType(WireFormat.CONTENT_TYPE).deliveryMode(2)
                            .type(PurchaseBatch.MESSAGE_TYPE).build(),
                    PurchaseBatch.frame(List.of(WireFormat.encode(purchase))));
        }
        channel.waitForConfirmsOrDie(10_000);
    }

    private static void awaitCounted(ServiceProcess copy, int purchases) {
        await("every purchase counted").atMost(Duration.ofSeconds(60))
                .until(() -> copy.metric("store_purchases_counted") >= purchases);
    }

    private String summary(ServiceProcess copy) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + copy.port() + "/state/summary")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }
}
