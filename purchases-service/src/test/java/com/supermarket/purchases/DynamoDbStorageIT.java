package com.supermarket.purchases;

import com.supermarket.broker.testing.TestServices;
import com.supermarket.tools.proxy.TcpProxy;
import java.net.URI;
import java.util.Map;
import java.util.UUID;

/**
 * The storage scenarios on the {@code dynamodb} profile, against DynamoDB Local: the test
 * container ({@link TestServices#dynamoDb()}), or on local services one running in this JVM. The
 * service reaches it through a {@link TcpProxy}, which the outage scenario cuts (connections
 * reset, new ones refused) and restores, so the data survives the outage.
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
        URI endpoint;
        if (TestServices.mode() == TestServices.Mode.CONTAINERS) {
            endpoint = TestServices.dynamoDb();
        } else {
            dynamoDb = new DynamoDbLocal();
            endpoint = URI.create(dynamoDb.endpoint());
        }
        proxy = new TcpProxy(endpoint.getHost(), endpoint.getPort());
        return Map.of(
                "purchases.dynamodb.endpoint", "http://" + proxy.host() + ":" + proxy.port(),
                "purchases.dynamodb.create-table", "true",
                "purchases.dynamodb.table", "purchases-it-" + UUID.randomUUID().toString().substring(0, 8),
                "purchases.dynamodb.call-timeout", "5s");
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
