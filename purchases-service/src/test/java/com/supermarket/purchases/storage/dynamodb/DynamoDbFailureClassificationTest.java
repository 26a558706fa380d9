package com.supermarket.purchases.storage.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.sun.net.httpserver.HttpServer;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository.Fault;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Which DynamoDB failures are the store's, told from the exceptions the real SDK client builds
 * out of DynamoDB's error answers. DynamoDB Local cannot revoke access or expire a token, so a
 * local HTTP endpoint answers every call with the error DynamoDB sends (status and
 * {@code __type}), and the repository classifies what its real client throws.
 */
class DynamoDbFailureClassificationTest {

    private HttpServer endpoint;
    private volatile int status;
    private volatile String errorType;
    private DynamoDbClient client;
    private DynamoDbPurchaseRepository repository;

    @BeforeEach
    void start() throws IOException {
        endpoint = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        endpoint.createContext("/", exchange -> {
            byte[] body = ("{\"__type\":\"com.amazonaws.dynamodb.v20120810#" + errorType + "\",\"message\":\"refused\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        endpoint.start();
        client = DynamoDbClient.builder().region(Region.US_EAST_1)
                .endpointOverride(URI.create("http://127.0.0.1:" + endpoint.getAddress().getPort()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("key", "secret")))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build();
        repository = new DynamoDbPurchaseRepository(client, new DynamoDbProperties("", "us-east-1", "purchases", false, 2,
                Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofSeconds(5)));
    }

    @AfterEach
    void stop() {
        repository.close();
        client.close();
        endpoint.stop(0);
    }

    /** Credentials, rights, the table, throttling, DynamoDB itself: every purchase would fail alike. */
    @ParameterizedTest
    @CsvSource({
            "400, AccessDeniedException",
            "400, UnrecognizedClientException",
            "400, ExpiredTokenException",
            "400, InvalidSignatureException",
            "400, MissingAuthenticationTokenException",
            "400, ResourceNotFoundException",
            "400, ThrottlingException",
            "400, ProvisionedThroughputExceededException",
            "400, RequestLimitExceeded",
            "500, InternalServerError",
            "503, ServiceUnavailable"})
    void anErrorEveryWriteSharesIsTheStores(int status, String errorType) {
        assertThat(faultOfAWrite(status, errorType)).isEqualTo(Fault.STORE);
    }

    /** A validation error may be one item's (too large): not known to be the store's, so the writer isolates it. */
    @ParameterizedTest
    @CsvSource("400, ValidationException")
    void aValidationErrorIsNotKnownToBeTheStores(int status, String errorType) {
        assertThat(faultOfAWrite(status, errorType)).isEqualTo(Fault.UNKNOWN);
    }

    private Fault faultOfAWrite(int status, String errorType) {
        this.status = status;
        this.errorType = errorType;
        Purchase purchase = new Purchase(UUID.randomUUID(), 3, 3001, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 1)), Instant.parse("2021-01-01T10:00:00Z"));
        RuntimeException failure = catchThrowableOfType(RuntimeException.class, () -> repository.storeAll(List.of(purchase)));
        assertThat(failure).as("the write fails").isNotNull();
        return repository.faultOf(failure);
    }
}
