package com.supermarket.store.durability;

import com.supermarket.broker.ShardConsumers;
import com.supermarket.contract.StorePartition;
import com.supermarket.store.counts.CountsSummary;
import com.supermarket.store.counts.StoreCounts;
import com.supermarket.store.partition.StoreCopy;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * This copy's counts for the other copies of its partition, on the server port:
 * {@code GET /state/snapshot} streams them in the snapshot format ({@link Snapshots}; what
 * {@link PeerRebuild} installs), {@code GET /state/summary} says what they add up to
 * ({@link CountsSummary}) so copies can be compared, and {@link Repartition} can check what it took. Both answer {@code 503} with a reason, and
 * the {@value PeerRebuild#STATE_HEADER} header, while the counts are not recovered
 * ({@value PeerRebuild#EMPTY}: the state directory is empty and no copy has given its counts yet).
 *
 * <p>A snapshot is given only while this copy's shard queues hold no ready message (else
 * {@code draining}): then it has been delivered every purchase published before, so it holds
 * everything the copy being rebuilt acknowledged before it went down. Thread-safe.
 */
@RestController
@RequestMapping("/state")
class StateController {

    /**
     * The header of a {@code GET /state/snapshot} answer naming whose counts it holds, as the
     * state directory's mark does ({@code "1 of 2, copy 0"}): what {@link Repartition} checks its
     * sources by.
     */
    static final String PARTITION_HEADER = "X-Store-Partition";

    private final CountsRecovery recovery;
    private final StoreCounts counts;
    private final StorePartition partition;
    private final StoreCopy copy;
    private final ShardConsumers consumers;
    private final AmqpAdmin admin;

    StateController(CountsRecovery recovery, StoreCounts counts, StorePartition partition, StoreCopy copy,
                    ShardConsumers consumers, AmqpAdmin admin) {
        this.recovery = recovery;
        this.counts = counts;
        this.partition = partition;
        this.copy = copy;
        this.consumers = consumers;
        this.admin = admin;
    }

    @GetMapping("/summary")
    Map<String, Object> summary() {
        requireRecovered();
        CountsSummary summary = CountsSummary.of(counts);
        Map<String, Object> body = identity();
        body.put("purchases", summary.purchases());
        body.put("quantity", summary.quantity());
        body.put("digest", summary.digest());
        return body;
    }

    @GetMapping("/snapshot")
    void snapshot(HttpServletResponse response) throws IOException {
        requireRecovered();
        if (!consumers.isConsuming()) {
            throw new Unavailable("draining", "not consuming its shard queues yet: " + consumers.details());
        }
        for (String shard : consumers.consumedShards()) {
            Properties queue = admin.getQueueProperties(shard);
            Object ready = queue == null ? null : queue.get(RabbitAdmin.QUEUE_MESSAGE_COUNT);
            if (!(ready instanceof Number messages) || messages.longValue() > 0) {
                throw new Unavailable("draining", "its shard queue '" + shard + "' holds " + ready + " ready message(s); "
                        + "a snapshot now could miss purchases the copy being rebuilt had counted");
            }
        }
        response.setContentType(MediaType.APPLICATION_OCTET_STREAM_VALUE);
        response.setHeader(PARTITION_HEADER, StateDirectory.mark(partition, copy.index()));
        // Numbered 0 with nothing of a log in it: the rebuilt copy's own log starts after it.
        Snapshots.write(Channels.newChannel(response.getOutputStream()), 0, counts, () -> 0);
    }

    private void requireRecovered() {
        if (!recovery.isReady()) {
            String state = recovery.stage() == CountsRecovery.Stage.AWAITING_REBUILD ? PeerRebuild.EMPTY
                    : recovery.stage().name().toLowerCase(Locale.ROOT);
            throw new Unavailable(state, recovery.problem());
        }
    }

    private Map<String, Object> identity() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("partition", partition.index());
        body.put("partitions", partition.partitions());
        body.put("copy", copy.index());
        return body;
    }

    @ExceptionHandler(Unavailable.class)
    ResponseEntity<Map<String, Object>> unavailable(Unavailable e) {
        Map<String, Object> body = identity();
        body.put("state", e.state);
        body.put("reason", e.getMessage());
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header(PeerRebuild.STATE_HEADER, e.state)
                .contentType(MediaType.APPLICATION_JSON).body(body);
    }

    /** This copy cannot give its counts now; {@code state} says why in one word. */
    static final class Unavailable extends RuntimeException {

        private final String state;

        Unavailable(String state, String reason) {
            super(reason);
            this.state = state;
        }
    }
}
