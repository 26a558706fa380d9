package com.supermarket.purchases.storage.dynamodb;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Repository;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.Select;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * DynamoDB store: one item per purchase, keyed by {@code purchaseId} alone (the original
 * design's (store, customer) key let a repeat customer overwrite earlier purchases), its items
 * a list attribute, and a global secondary index {@value #STORE_DATE_INDEX} (store id, date)
 * for store/date queries. Writes go out as {@code BatchWriteItem} in chunks of 25 (the API's
 * limit), the chunks of one batch concurrently (on virtual threads: the client blocks); unprocessed
 * items (throttling) are resent with exponential backoff and full jitter.
 * A put by {@code purchaseId} is idempotent: a redelivery writes the same item again.
 *
 * <p>Thread-safe: stateless over the thread-safe {@link DynamoDbClient}.
 */
@Repository
@Profile("dynamodb")
class DynamoDbPurchaseRepository implements PurchaseRepository, AutoCloseable {

    static final String STORE_DATE_INDEX = "storeId-purchaseDate-index";
    private static final int MAX_BATCH_WRITE = 25;
    /** Table administration is rare and may be slow (DynamoDB Local's first call starts its engine). */
    private static final Consumer<AwsRequestOverrideConfiguration.Builder> SLOW_ADMIN_CALL =
            o -> o.apiCallTimeout(Duration.ofSeconds(60));
    private static final Logger log = LoggerFactory.getLogger(DynamoDbPurchaseRepository.class);

    private final DynamoDbClient client;
    private final DynamoDbProperties properties;
    private final ExecutorService chunkWriters = Executors.newVirtualThreadPerTaskExecutor();

    DynamoDbPurchaseRepository(DynamoDbClient client, DynamoDbProperties properties) {
        this.client = client;
        this.properties = properties;
        if (properties.createTable()) {
            createTableIfMissing();
        }
    }

    @Override
    public StoreResult storeAll(List<Purchase> purchases) {
        List<List<WriteRequest>> chunks = new ArrayList<>();
        for (int from = 0; from < purchases.size(); from += MAX_BATCH_WRITE) {
            List<WriteRequest> chunk = new ArrayList<>(MAX_BATCH_WRITE);
            for (Purchase purchase : purchases.subList(from, Math.min(purchases.size(), from + MAX_BATCH_WRITE))) {
                chunk.add(WriteRequest.builder().putRequest(PutRequest.builder().item(toItem(purchase)).build()).build());
            }
            chunks.add(chunk);
        }
        if (chunks.size() == 1) {
            writeChunk(chunks.getFirst());
        } else {
            writeConcurrently(chunks);
        }
        return new StoreResult(purchases.size(), 0);
    }

    /** Writes every chunk at once and waits for all; the first failure is rethrown as it was. */
    private void writeConcurrently(List<List<WriteRequest>> chunks) {
        List<Future<?>> writes = new ArrayList<>(chunks.size());
        for (List<WriteRequest> chunk : chunks) {
            writes.add(chunkWriters.submit(() -> writeChunk(chunk)));
        }
        RuntimeException failure = null;
        for (Future<?> write : writes) {
            try {
                write.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw SdkClientException.create("interrupted while writing chunks", e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void close() {
        chunkWriters.shutdownNow();
    }

    private void writeChunk(List<WriteRequest> chunk) {
        Map<String, List<WriteRequest>> pending = Map.of(properties.table(), chunk);
        long backoff = properties.initialBackoff().toMillis();
        for (int attempt = 1; ; attempt++) {
            Map<String, List<WriteRequest>> sending = pending;
            BatchWriteItemResponse response = client.batchWriteItem(request -> request.requestItems(sending));
            Map<String, List<WriteRequest>> unprocessed = response.unprocessedItems();
            if (unprocessed == null || unprocessed.isEmpty()) {
                return;
            }
            if (attempt >= properties.maxAttempts()) {
                throw new UnprocessedItemsException(unprocessed.getOrDefault(properties.table(), List.of()).size(), attempt);
            }
            pending = unprocessed;
            sleep(ThreadLocalRandom.current().nextLong(backoff + 1));
            backoff = Math.min(backoff * 2, properties.maxBackoff().toMillis());
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw SdkClientException.create("interrupted while backing off", e);
        }
    }

    @Override
    public long count() {
        long count = 0;
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = client.scan(scan -> scan.tableName(properties.table()).select(Select.COUNT)
                    .consistentRead(true).exclusiveStartKey(from));
            count += page.count();
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return count;
    }

    @Override
    public Optional<Purchase> findById(UUID purchaseId) {
        Map<String, AttributeValue> item = client.getItem(get -> get.tableName(properties.table()).consistentRead(true)
                .key(Map.of("purchaseId", AttributeValue.fromS(purchaseId.toString())))).item();
        return item == null || item.isEmpty() ? Optional.empty() : Optional.of(fromItem(item));
    }

    @Override
    public void ping() {
        client.describeTable(describe -> describe.tableName(properties.table()));
    }

    @Override
    public boolean isTransient(RuntimeException failure) {
        if (failure instanceof UnprocessedItemsException || failure instanceof SdkClientException) {
            return true;
        }
        if (failure instanceof DynamoDbException e) {
            // Throttling and server errors pass; a validation error (4xx) is about the data.
            return e.isThrottlingException() || e.statusCode() >= 500 || e instanceof ResourceNotFoundException
                    || e instanceof ProvisionedThroughputExceededException || e instanceof RequestLimitExceededException;
        }
        return failure instanceof SdkException e && e.retryable();
    }

    static Map<String, AttributeValue> toItem(Purchase purchase) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("purchaseId", AttributeValue.fromS(purchase.purchaseId().toString()));
        item.put("storeId", AttributeValue.fromN(Integer.toString(purchase.storeId())));
        item.put("customerId", AttributeValue.fromN(Integer.toString(purchase.customerId())));
        item.put("purchaseDate", AttributeValue.fromS(purchase.date().toString()));
        item.put("acceptedAt", AttributeValue.fromS(purchase.acceptedAt().toString()));
        List<AttributeValue> items = new ArrayList<>(purchase.items().size());
        for (PurchaseItem line : purchase.items()) {
            items.add(AttributeValue.fromM(Map.of(
                    "itemId", AttributeValue.fromN(Integer.toString(line.itemId())),
                    "quantity", AttributeValue.fromN(Integer.toString(line.quantity())))));
        }
        item.put("items", AttributeValue.fromL(items));
        return item;
    }

    static Purchase fromItem(Map<String, AttributeValue> item) {
        List<PurchaseItem> lines = item.get("items").l().stream()
                .map(line -> new PurchaseItem(Integer.parseInt(line.m().get("itemId").n()),
                        Integer.parseInt(line.m().get("quantity").n())))
                .toList();
        return new Purchase(UUID.fromString(item.get("purchaseId").s()), Integer.parseInt(item.get("storeId").n()),
                Integer.parseInt(item.get("customerId").n()), LocalDate.parse(item.get("purchaseDate").s()), lines,
                Instant.parse(item.get("acceptedAt").s()));
    }

    private void createTableIfMissing() {
        try {
            client.describeTable(describe -> describe.tableName(properties.table()).overrideConfiguration(SLOW_ADMIN_CALL));
            return;
        } catch (ResourceNotFoundException e) {
            log.info("Creating DynamoDB table {} (on-demand capacity)", properties.table());
        }
        // The index projects keys only: the store/date query gets purchase ids, and a write costs
        // one index entry of a few bytes instead of a second copy of the items.
        client.createTable(create -> create.tableName(properties.table()).overrideConfiguration(SLOW_ADMIN_CALL)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(
                        AttributeDefinition.builder().attributeName("purchaseId").attributeType(ScalarAttributeType.S).build(),
                        AttributeDefinition.builder().attributeName("storeId").attributeType(ScalarAttributeType.N).build(),
                        AttributeDefinition.builder().attributeName("purchaseDate").attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("purchaseId").keyType(KeyType.HASH).build())
                .globalSecondaryIndexes(GlobalSecondaryIndex.builder().indexName(STORE_DATE_INDEX)
                        .keySchema(KeySchemaElement.builder().attributeName("storeId").keyType(KeyType.HASH).build(),
                                KeySchemaElement.builder().attributeName("purchaseDate").keyType(KeyType.RANGE).build())
                        .projection(projection -> projection.projectionType(ProjectionType.KEYS_ONLY))
                        .build()));
        client.waiter().waitUntilTableExists(describe -> describe.tableName(properties.table()));
    }

    /** Items stayed unprocessed (throttled) after every attempt; the whole batch is retried later. */
    static final class UnprocessedItemsException extends RuntimeException {
        UnprocessedItemsException(int items, int attempts) {
            super(items + " item(s) still unprocessed after " + attempts + " BatchWriteItem attempts");
        }
    }
}
