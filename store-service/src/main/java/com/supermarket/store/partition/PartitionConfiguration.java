package com.supermarket.store.partition;

import com.supermarket.broker.BrokerSettings;
import com.supermarket.contract.StorePartition;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store partition this instance is ({@link StorePartition}), and which copy of it
 * ({@link StoreCopy}): it consumes only that
 * partition's {@code storeX} shard queues, keeps only its stores in its state directory, and
 * answers queries on the partition's own query queue. Chosen once at startup and logged; a
 * partition outside {@code 0..STORE_PARTITIONS-1}, or (replicated topology mode) a shard count
 * the partitions do not divide, refuses the start. In the sharded mode the shard count is known
 * only once the shard queues are listed: there the shard consumers refuse instead, readiness DOWN
 * with the reason.
 */
@Configuration(proxyBeanMethods = false)
class PartitionConfiguration {

    private static final Logger log = LoggerFactory.getLogger(PartitionConfiguration.class);
    private static final Pattern ORDINAL = Pattern.compile(".*-(\\d{1,9})");

    @Bean
    StorePartition storePartition(BrokerSettings broker, PartitionProperties properties) {
        int partitions = broker.storePartitions();
        String hostname = hostname();
        String chosen;
        int index;
        if (properties.index() != null) {
            index = properties.index();
            chosen = "from STORE_PARTITION_INDEX";
        } else if (partitions == 1) {
            index = 0;
            chosen = "the only one";
        } else {
            Integer ordinal = ordinal(hostname);
            index = ordinal == null ? 0 : ordinal;
            chosen = ordinal == null ? "0: STORE_PARTITION_INDEX is unset and the host name '" + hostname + "' ends in no ordinal"
                    : "the ordinal of the host name '" + hostname + "' (STORE_PARTITION_INDEX is unset)";
        }
        StorePartition partition = new StorePartition(index, partitions);
        if (broker.topologyMode() == BrokerSettings.TopologyMode.REPLICATED) {
            String problem = StorePartition.splitProblem(broker.replicatedShards(), partitions);
            if (problem != null) {
                throw new IllegalStateException(problem + " (BROKER_REPLICATED_SHARDS " + broker.replicatedShards() + ")");
            }
        }
        log.info("This is {} ({}): it counts the stores s with s mod {} = {} and answers on '{}'", partition, chosen,
                partitions, index, partition.queryQueue());
        return partition;
    }

    @Bean
    StoreCopy storeCopy(BrokerSettings broker, PartitionProperties properties, StorePartition partition) {
        StoreCopy copy = new StoreCopy(properties.copy() == null ? 0 : properties.copy(), broker.storeCopies());
        log.info("This is {} of {}: it consumes the shard queues of '{}'{}", copy, partition, copy.exchange(),
                copy.copies() > 1 ? " and shares the query queue with the other copies" : "");
        return copy;
    }

    /** The number after the last {@code -} of {@code hostname}, or null. */
    static Integer ordinal(String hostname) {
        Matcher matcher = ORDINAL.matcher(hostname == null ? "" : hostname);
        return matcher.matches() ? Integer.valueOf(matcher.group(1)) : null;
    }

    private static String hostname() {
        String hostname = System.getenv("HOSTNAME");
        if (hostname != null && !hostname.isBlank()) {
            return hostname;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "";
        }
    }
}
