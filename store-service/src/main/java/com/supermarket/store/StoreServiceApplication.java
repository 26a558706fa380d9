package com.supermarket.store;

import com.supermarket.store.durability.Repartition;
import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * store-service: consumes every purchase from the {@code storeX} shard queues into in-memory
 * counts per item and store, and answers the top-K queries of purchase-api over RPC. With
 * {@value Repartition#COMMAND} as its first argument it runs that command instead
 * ({@link Repartition}: the counts split for another partition count).
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class StoreServiceApplication {

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(Repartition.COMMAND)) {
            System.exit(Repartition.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
        }
        SpringApplication.run(StoreServiceApplication.class, args);
    }
}
