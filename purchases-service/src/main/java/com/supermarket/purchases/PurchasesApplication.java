package com.supermarket.purchases;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * purchases-service: consumes the {@code purchaseX} shard queues in batches and stores every
 * purchase exactly once in the system of record (MySQL/MariaDB by default, DynamoDB with the
 * {@code dynamodb} profile).
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class PurchasesApplication {

    public static void main(String[] args) {
        SpringApplication.run(PurchasesApplication.class, args);
    }
}
