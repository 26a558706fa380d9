package com.supermarket.purchases.storage.dynamodb;

import com.supermarket.broker.BrokerSetup;
import com.supermarket.purchases.ingest.IngestProperties;
import java.net.URI;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProviderChain;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

@Configuration(proxyBeanMethods = false)
@Profile("dynamodb")
class DynamoDbConfiguration {

    @Bean(destroyMethod = "close")
    DynamoDbClient dynamoDbClient(DynamoDbProperties properties, IngestProperties ingest, BrokerSetup broker) {
        DynamoDbClientBuilder builder = DynamoDbClient.builder()
                .region(Region.of(properties.region()))
                .credentialsProvider(credentials(properties))
                // The writer puts a group's chunks of 25 concurrently (40 messages of ~13 purchases
                // are ~21 chunks; more wait for a connection), plus the health check and lookups.
                .httpClientBuilder(ApacheHttpClient.builder()
                        .maxConnections(4 * ingest.writersPerNode(broker.settings().shardsPerNode()) + 4))
                .overrideConfiguration(o -> o.apiCallTimeout(properties.callTimeout()));
        if (!properties.endpoint().isBlank()) {
            builder.endpointOverride(URI.create(properties.endpoint()));
        }
        return builder.build();
    }

    /**
     * The default chain (environment, system properties, web identity token = IRSA on EKS,
     * profile files, container and instance roles). With an endpoint override (DynamoDB Local,
     * which accepts any key) it falls back to a dummy key, so a local run needs no AWS setup.
     */
    private static AwsCredentialsProvider credentials(DynamoDbProperties properties) {
        DefaultCredentialsProvider defaults = DefaultCredentialsProvider.builder().build();
        if (properties.endpoint().isBlank()) {
            return defaults;
        }
        return AwsCredentialsProviderChain.builder()
                .credentialsProviders(defaults, StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build();
    }
}
