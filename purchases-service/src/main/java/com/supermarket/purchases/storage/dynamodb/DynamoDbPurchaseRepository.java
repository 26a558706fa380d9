package com.supermarket.purchases.storage.dynamodb;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
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
 * The ids of a batch are read first ({@code BatchGetItem}, keys only) and only new ones are put,
 * so a redelivery is counted as a duplicate and the first body under an id is kept.
 *
 * <p>Thread-safe: stateless over the thread-safe {@link DynamoDbClient}.
 */
@Repository
@Profile("dynamodb")
class DynamoDbPurchaseRepository implements PurchaseRepository, AutoCloseable {

    static final String STORE_DATE_INDEX = "storeId-purchaseDate-index";
    private static final int MAX_BATCH_WRITE = 25;
    private static final int MAX_BATCH_GET = 100;
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
        // The first of each id wins, as in MySQL: a purchase already stored is never put again
        // (a second body under a reused Idempotency-Key must not replace the first), and an id
        // twice in one batch is written once (BatchWriteItem refuses a key twice in a request).
        Map<String, Purchase> fresh = new LinkedHashMap<>();
        for (Purchase purchase : purchases) {
            fresh.putIfAbsent(purchase.purchaseId().toString(), purchase);
        }
        fresh.keySet().removeAll(storedIds(List.copyOf(fresh.keySet())));
        List<Purchase> writing = List.copyOf(fresh.values());
        if (writing.isEmpty()) {
            return new StoreResult(0, purchases.size());
        }
        List<List<WriteRequest>> chunks = new ArrayList<>();
        for (int from = 0; from < writing.size(); from += MAX_BATCH_WRITE) {
            List<WriteRequest> chunk = new ArrayList<>(MAX_BATCH_WRITE);
            for (Purchase purchase : writing.subList(from, Math.min(writing.size(), from + MAX_BATCH_WRITE))) {
                chunk.add(WriteRequest.builder().putRequest(PutRequest.builder().item(toItem(purchase)).build()).build());
            }
            chunks.add(chunk);
        }
        if (chunks.size() == 1) {
            writeChunk(chunks.getFirst());
        } else {
            writeConcurrently(chunks);
        }
        return new StoreResult(writing.size(), purchases.size() - writing.size());
    }

    /**
     * Which of {@code ids} are stored already: {@code BatchGetItem} of the keys only, strongly
     * consistent, 100 keys per request (the API's limit). Not atomic with the write that
     * follows: two consumers writing the same id at the same moment (a redelivery and a till's
     * retry on two shard queues) may still both put it, the same item under the same key.
     */
    private Set<String> storedIds(List<String> ids) {
        Set<String> stored = new HashSet<>();
        for (int from = 0; from < ids.size(); from += MAX_BATCH_GET) {
            List<Map<String, AttributeValue>> keys = ids.subList(from, Math.min(ids.size(), from + MAX_BATCH_GET)).stream()
                    .map(id -> Map.of("purchaseId", AttributeValue.fromS(id))).toList();
            KeysAndAttributes pending = KeysAndAttributes.builder().keys(keys).projectionExpression("purchaseId")
                    .consistentRead(true).build();
            for (int attempt = 1; pending != null; attempt++) {
                KeysAndAttributes asking = pending;
                BatchGetItemResponse response = client.batchGetItem(get -> get.requestItems(Map.of(properties.table(), asking)));
                response.responses().getOrDefault(properties.table(), List.of())
                        .forEach(item -> stored.add(item.get("purchaseId").s()));
                pending = response.unprocessedKeys().get(properties.table());
                if (pending != null && !pending.hasKeys()) {
                    pending = null;
                }
                if (pending != null && attempt >= properties.maxAttempts()) {
                    throw new UnprocessedItemsException(pending.keys().size(), attempt);
                }
            }
        }
        return stored;
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
    public Fault faultOf(RuntimeException failure) {
        if (failure instanceof UnprocessedItemsException || failure instanceof SdkClientException) {
            return Fault.STORE; // throttled items; no answer, no credentials
        }
        if (failure instanceof AwsServiceException e) {
            boolean store = e instanceof ResourceNotFoundException || e instanceof ProvisionedThroughputExceededException
                    || e instanceof RequestLimitExceededException || e.statusCode() >= 500 || e.statusCode() == 401
                    || e.statusCode() == 403 || e.awsErrorDetails() != null && (STORE_ERRORS.contains(
                    e.awsErrorDetails().errorCode()) || e.isThrottlingException() || e.isClockSkewException());
            // Anything else, a ValidationException included, may be one item's (too large): the
            // writer finds it by writing the purchases alone.
            return store ? Fault.STORE : Fault.UNKNOWN;
        }
        return failure instanceof SdkException e && e.retryable() ? Fault.STORE : Fault.UNKNOWN;
    }

    /**
     * Error codes with which DynamoDB refuses every request of the service alike (HTTP 400, the
     * code in {@code __type}): its credentials or rights, the table, throttling.
     */
    private static final Set<String> STORE_ERRORS = Set.of(
            "AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException", "ExpiredToken",
            "InvalidSignatureException", "IncompleteSignatureException", "MissingAuthenticationTokenException",
            "InvalidClientTokenId", "ResourceNotFoundException", "ResourceInUseException", "ThrottlingException",
            "ProvisionedThroughputExceededException", "RequestLimitExceeded", "LimitExceededException");

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
            super(items + " item(s) still unprocessed after " + attempts + " batch attempts");
        }
    }
}
