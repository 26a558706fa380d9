package com.supermarket.purchases.storage.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import com.supermarket.purchases.storage.WriteBenchmarkHarness;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Batched ({@code BatchWriteItem}, 25 per call) vs single-item writes into DynamoDB Local
 * running in this JVM (in memory). DynamoDB Local is a SQLite emulator: its figures say how the
 * client side batches, not what AWS would sustain. Not part of the normal build:
 * {@code ./mvnw -pl purchases-service -am -Pbenchmark test}.
 */
class DynamoDbWriteBenchmark {

    @Test
    void batchedWritesAgainstSingleItemWrites() throws Exception {
        int threads = WriteBenchmarkHarness.setting("threads", 4);
        int purchases = WriteBenchmarkHarness.setting("dynamoPurchases", 5_000);
        int batchSize = WriteBenchmarkHarness.setting("batchSize", 100);
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        DynamoDBProxyServer server = ServerRunner.createServerFromCommandLineArgs(
                new String[] {"-inMemory", "-port", Integer.toString(port)});
        server.start();
        try (DynamoDbClient client = DynamoDbClient.builder().region(Region.US_EAST_1)
                .endpointOverride(URI.create("http://127.0.0.1:" + port))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(threads + 2))
                .build()) {
            DynamoDbProperties properties = new DynamoDbProperties("http://127.0.0.1:" + port, "us-east-1", "purchases-bench",
                    true, 8, Duration.ofMillis(25), Duration.ofSeconds(1), Duration.ofSeconds(30));
            DynamoDbPurchaseRepository repository = new DynamoDbPurchaseRepository(client, properties);
            WriteBenchmarkHarness.run("dynamodb-local warm-up", repository::storeAll, 1_000, threads, batchSize);
            double single = WriteBenchmarkHarness.run("dynamodb-local single", repository::storeAll, purchases / 2, threads, 1);
            double batched = WriteBenchmarkHarness.run("dynamodb-local batched", repository::storeAll, purchases, threads, batchSize);
            assertThat(repository.count()).isEqualTo(1_000 + purchases / 2 + purchases);
            assertThat(single).isPositive();
            assertThat(batched).isPositive();
        } finally {
            server.stop();
        }
    }
}
