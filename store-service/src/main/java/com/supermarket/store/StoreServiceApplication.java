package com.supermarket.store;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * store-service: consumes every purchase from the {@code storeX} shard queues into in-memory
 * counts per item and store, and answers the top-K queries of purchase-api over RPC.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class StoreServiceApplication {

    public static void main(String[] args) {
        SpringApplication.run(StoreServiceApplication.class, args);
    }
}
