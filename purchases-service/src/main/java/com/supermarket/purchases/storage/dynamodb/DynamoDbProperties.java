package com.supermarket.purchases.storage.dynamodb;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the {@code dynamodb} profile.
 *
 * @param endpoint       endpoint override, e.g. {@code http://localhost:8000} for DynamoDB Local;
 *                       empty for AWS
 * @param region         the AWS region
 * @param table          the table name
 * @param createTable    whether to create the table (and its index) at startup if it is missing;
 *                       for local use, the deployment creates it in AWS
 * @param maxAttempts    BatchWriteItem calls per chunk while items stay unprocessed (throttling)
 * @param initialBackoff first wait before resending unprocessed items; doubled each time, with jitter
 * @param maxBackoff     cap of that wait
 * @param callTimeout    overall timeout of one API call, retries included
 */
@ConfigurationProperties("purchases.dynamodb")
public record DynamoDbProperties(
        @DefaultValue("") String endpoint,
        @DefaultValue("us-east-1") String region,
        @DefaultValue("purchases") String table,
        @DefaultValue("false") boolean createTable,
        @DefaultValue("8") int maxAttempts,
        @DefaultValue("25ms") Duration initialBackoff,
        @DefaultValue("1s") Duration maxBackoff,
        @DefaultValue("10s") Duration callTimeout) {
}
