package com.supermarket.purchases.storage.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository.Fault;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;

class DynamoDbItemMappingTest {

    private final Purchase purchase = new Purchase(UUID.randomUUID(), 12, 12_345, LocalDate.of(2021, 3, 4),
            List.of(new PurchaseItem(101, 1), new PurchaseItem(99_999, 3)), Instant.parse("2021-03-04T08:09:10.123456Z"));

    @Test
    void anItemKeyedByPurchaseIdCarriesTheIndexKeysAndTheItems() {
        var item = DynamoDbPurchaseRepository.toItem(purchase);

        assertThat(item.get("purchaseId").s()).isEqualTo(purchase.purchaseId().toString());
        assertThat(item.get("storeId").n()).isEqualTo("12");
        assertThat(item.get("purchaseDate").s()).isEqualTo("2021-03-04");
        assertThat(item.get("items").l()).hasSize(2);
    }

    @Test
    void aPurchaseSurvivesTheRoundTripExactly() {
        assertThat(DynamoDbPurchaseRepository.fromItem(DynamoDbPurchaseRepository.toItem(purchase))).isEqualTo(purchase);
    }

    @Test
    void throttlingAndLostConnectionsAreTheStoresAValidationErrorIsNotKnownToBe() {
        var repository = new DynamoDbPurchaseRepository(null,
                new DynamoDbProperties("", "us-east-1", "t", false, 8, java.time.Duration.ZERO, java.time.Duration.ZERO,
                        java.time.Duration.ofSeconds(1)));

        assertThat(repository.faultOf(SdkClientException.create("connection refused"))).isEqualTo(Fault.STORE);
        assertThat(repository.faultOf((RuntimeException) ProvisionedThroughputExceededException.builder()
                .statusCode(400).message("slow down").build())).isEqualTo(Fault.STORE);
        assertThat(repository.faultOf((RuntimeException) DynamoDbException.builder().statusCode(400)
                .message("One or more parameter values were invalid").build())).isEqualTo(Fault.UNKNOWN);
    }
}
