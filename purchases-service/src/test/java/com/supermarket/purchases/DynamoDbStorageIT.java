package com.supermarket.purchases;

import com.supermarket.contract.testing.TcpProxy;
import java.util.Map;

/**
 * The storage scenarios on the {@code dynamodb} profile, against DynamoDB Local running in this
 * JVM. The service reaches it through a {@link TcpProxy}, which the outage scenario cuts
 * (connections reset, new ones refused) and restores, so the data survives the outage.
 */
class DynamoDbStorageIT extends StorageScenarios {

    private DynamoDbLocal dynamoDb;
    private TcpProxy proxy;

    @Override
    String profile() {
        return "dynamodb";
    }

    @Override
    Map<String, String> startBackend() throws Exception {
        dynamoDb = new DynamoDbLocal();
        proxy = new TcpProxy("127.0.0.1", dynamoDb.port());
        return Map.of(
                "dynamodb.endpoint", "http://127.0.0.1:" + proxy.port(),
                "dynamodb.create-table", "true",
                "dynamodb.table", "purchases-it",
                "dynamodb.call-timeout", "5s");
    }

    @Override
    void stopBackend() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (dynamoDb != null) {
            dynamoDb.close();
        }
    }

    @Override
    void makeStoreUnavailable() {
        proxy.disconnect();
    }

    @Override
    void restoreStore() {
        proxy.restore();
    }
}
