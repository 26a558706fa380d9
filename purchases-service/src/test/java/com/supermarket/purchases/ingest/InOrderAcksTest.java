package com.supermarket.purchases.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

class InOrderAcksTest {

    private final InOrderAcks acks = new InOrderAcks();
    private final Channel channel = mock(Channel.class);

    @Test
    void acknowledgesOnlyUpToTheFirstDeliveryStillPendingThenOnceForTheRest() throws Exception {
        List<InOrderAcks.Delivery> delivered = expect(3);

        acks.acknowledge(delivered.subList(1, 3));
        verify(channel, never()).basicAck(anyLong(), anyBoolean());
        acks.acknowledge(delivered.subList(0, 1));

        verify(channel).basicAck(3, true);
        verify(channel, never()).basicAck(1, true);
        verify(channel, never()).basicAck(2, true);
        assertThat(acks.pending()).isZero();
    }

    @Test
    void aRequeuedDeliveryIsSettledAloneAtOnceAndTheAckAfterItPassesOverIt() throws Exception {
        List<InOrderAcks.Delivery> delivered = expect(3);

        acks.acknowledge(List.of(delivered.get(0), delivered.get(2)));
        acks.requeue(delivered.get(1));

        InOrder settled = inOrder(channel);
        settled.verify(channel).basicAck(1, true);
        settled.verify(channel).basicNack(2, false, true);
        settled.verify(channel).basicAck(3, true);
    }

    @Test
    void aClosedChannelIsForgottenWithItsDeliveries() throws Exception {
        List<InOrderAcks.Delivery> delivered = expect(2);
        doThrow(new AlreadyClosedException(new ShutdownSignalException(false, false, null, null)))
                .when(channel).basicAck(anyLong(), anyBoolean());

        acks.acknowledge(delivered.subList(0, 1));

        assertThat(acks.pending()).isZero();
    }

    /**
     * Many threads settle the deliveries of several channels in random order (most acknowledged,
     * some in groups, some requeued): no ack ever covers a delivery not yet settled, a requeue
     * never comes after an ack that covered its tag, each channel's acks rise, and every
     * delivery ends settled.
     */
    @Test
    void hammer() throws Exception {
        int channels = 4;
        int perChannel = 5_000;
        List<String> violations = Collections.synchronizedList(new ArrayList<>());
        Map<Channel, Set<Long>> decided = new ConcurrentHashMap<>();
        Map<Channel, Long> highestAck = new ConcurrentHashMap<>();
        Map<Channel, Set<Long>> requeued = new ConcurrentHashMap<>();
        List<InOrderAcks.Delivery> all = new ArrayList<>();
        for (int c = 0; c < channels; c++) {
            Channel each = recording(decided, highestAck, requeued, violations);
            decided.put(each, ConcurrentHashMap.newKeySet());
            requeued.put(each, ConcurrentHashMap.newKeySet());
            for (long tag = 1; tag <= perChannel; tag++) {
                all.add(acks.expect(each, tag));
            }
        }
        Collections.shuffle(all, new Random(49));
        int threads = 4;
        ConcurrentLinkedQueue<InOrderAcks.Delivery> work = new ConcurrentLinkedQueue<>(all);
        try (ExecutorService settlers = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random random = new Random(t);
                running.add(settlers.submit(() -> {
                    for (InOrderAcks.Delivery next = work.poll(); next != null; next = work.poll()) {
                        if (random.nextInt(10) == 0) {
                            decided.get(next.channel()).add(next.tag());
                            acks.requeue(next);
                            continue;
                        }
                        List<InOrderAcks.Delivery> group = new ArrayList<>(List.of(next));
                        for (int more = random.nextInt(4); more > 0 && (next = work.poll()) != null; more--) {
                            group.add(next);
                        }
                        group.forEach(each -> decided.get(each.channel()).add(each.tag()));
                        acks.acknowledge(group);
                    }
                }));
            }
            for (Future<?> each : running) {
                each.get();
            }
        }

        assertThat(violations).isEmpty();
        assertThat(acks.pending()).isZero();
        for (Channel each : decided.keySet()) {
            long lastAcknowledged = perChannel;
            while (requeued.get(each).contains(lastAcknowledged)) {
                lastAcknowledged--;
            }
            assertThat(highestAck.get(each)).as("every acknowledged delivery covered").isEqualTo(lastAcknowledged);
        }
    }

    /** Deliveries 1 to {@code count} of {@link #channel}, registered in order. */
    private List<InOrderAcks.Delivery> expect(int count) {
        List<InOrderAcks.Delivery> delivered = new ArrayList<>();
        for (long tag = 1; tag <= count; tag++) {
            delivered.add(acks.expect(channel, tag));
        }
        return delivered;
    }

    /** A channel that checks each ack and nack against what the test decided so far. */
    private static Channel recording(Map<Channel, Set<Long>> decided, Map<Channel, Long> highestAck,
                                     Map<Channel, Set<Long>> requeued, List<String> violations) throws Exception {
        Channel channel = mock(Channel.class);
        doAnswer(call -> {
            long tag = call.getArgument(0);
            long before = highestAck.getOrDefault(channel, 0L);
            if (tag <= before) {
                violations.add("ack " + tag + " after ack " + before);
            }
            for (long t = before + 1; t <= tag; t++) {
                if (!decided.get(channel).contains(t)) {
                    violations.add("ack " + tag + " covers undecided " + t);
                }
            }
            highestAck.put(channel, tag);
            return null;
        }).when(channel).basicAck(anyLong(), anyBoolean());
        doAnswer(call -> {
            long tag = call.getArgument(0);
            if (tag <= highestAck.getOrDefault(channel, 0L)) {
                violations.add("requeue " + tag + " after an ack covering it");
            }
            if (!requeued.get(channel).add(tag)) {
                violations.add("requeued twice: " + tag);
            }
            return null;
        }).when(channel).basicNack(anyLong(), anyBoolean(), anyBoolean());
        return channel;
    }
}
