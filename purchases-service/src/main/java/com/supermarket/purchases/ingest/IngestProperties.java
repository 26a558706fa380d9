package com.supermarket.purchases.ingest;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the shard queues are consumed and how storage failures are retried.
 *
 * @param concurrency         consumer threads (each with its own channel on every shard queue);
 *                            each holds at most one database connection at a time
 * @param batchSize           purchases per write; also half the prefetch, so the next batch
 *                            streams in while one is committed
 * @param receiveTimeout      how long a consumer waits for one more message before writing a
 *                            partial batch
 * @param batchReceiveTimeout upper bound on the time spent filling one batch
 * @param retryInitialBackoff first wait after a failed write; doubled per failure (with jitter)
 * @param retryMaxBackoff     cap of that wait
 */
@ConfigurationProperties("ingest")
public record IngestProperties(
        @DefaultValue("4") int concurrency,
        @DefaultValue("100") int batchSize,
        @DefaultValue("100ms") Duration receiveTimeout,
        @DefaultValue("500ms") Duration batchReceiveTimeout,
        @DefaultValue("200ms") Duration retryInitialBackoff,
        @DefaultValue("10s") Duration retryMaxBackoff) {

    public IngestProperties {
        if (concurrency < 1 || batchSize < 1) {
            throw new IllegalArgumentException("ingest.concurrency and ingest.batch-size must be at least 1");
        }
    }
}
