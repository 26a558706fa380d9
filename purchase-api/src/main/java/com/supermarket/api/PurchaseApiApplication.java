package com.supermarket.api;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The platform's front door: validates purchases, publishes them durably into the sharded
 * RabbitMQ, and answers the store queries over RPC to store-service.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class PurchaseApiApplication {

    public static void main(String[] args) {
        SpringApplication.run(PurchaseApiApplication.class, args);
    }
}
