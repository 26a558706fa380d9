package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.api.testing.ApiClient;
import com.supermarket.contract.Topology;
import com.supermarket.contract.testing.TestBroker;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The exchanges exist but no sharding policy does (the deployment was meant to provide it), so
 * no shard queue exists and a purchase reaches no queue: the broker returns it and the API must
 * not answer 201.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"platform.broker.manage-policies=false", "logging.structured.format.console="})
@DirtiesContext
class UnroutablePurchaseIT {

    private static final TestBroker broker = TestBroker.create("api-unroutable");

    @DynamicPropertySource
    static void broker(DynamicPropertyRegistry registry) {
        broker.springProperties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @AfterAll
    static void deleteVhost() {
        broker.close();
    }

    @LocalServerPort
    private int port;

    @LocalManagementPort
    private int managementPort;

    @Test
    void aPurchaseThatReachesNoQueueIsRefusedWith503() {
        ApiClient api = new ApiClient(port, managementPort);

        HttpResponse<String> response = api.postPurchase(1, ApiClient.body(1));

        assertThat(broker.shardQueues(Topology.PURCHASE_EXCHANGE)).isEmpty();
        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        assertThat(response.body()).contains("could not route");
        assertThat(response.headers().firstValue("Retry-After")).isPresent();
        assertThat(api.actuator("/prometheus").body()).contains("purchases_refused_total{application=\"purchase-api\",reason=\"UNROUTABLE\"} 1.0");
    }
}
