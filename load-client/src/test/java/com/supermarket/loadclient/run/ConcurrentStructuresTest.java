package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.result.RequestType;

class ConcurrentStructuresTest {

    private static final int THREADS = 16;
    private static final int PER_THREAD = 5_000;

    @TempDir
    Path dir;

    @Test
    void failureTallyCountsEveryFailureFromManyThreadsAndLogsOnlyAFew() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        FailureTally tally = new FailureTally(new PrintStream(log, true));
        hammer(thread -> {
            for (int i = 0; i < PER_THREAD; i++) {
                if (i % 2 == 0) {
                    tally.status(503, RequestType.POST, "/purchase/1", "{\"message\":\"busy\"}");
                } else {
                    tally.error(new java.net.ConnectException("refused"), RequestType.GET_STORE, "/items/store/1");
                }
            }
        });

        assertThat(tally.failedAttempts()).isEqualTo(THREADS * PER_THREAD);
        assertThat(tally.byStatus()).containsExactly(Map.entry("503", THREADS * PER_THREAD / 2L));
        assertThat(tally.byError()).containsExactly(Map.entry("ConnectException", THREADS * PER_THREAD / 2L));
        long loggedLines = log.toString().lines().filter(line -> line.contains("request failed")).count();
        assertThat(loggedLines).isBetween(1L, 10L);
    }

    @Test
    void phaseGateStartsEveryWaitingStoreExactlyOnceWhateverTheRace() throws Exception {
        for (int round = 0; round < 200; round++) {
            PhaseGate gate = new PhaseGate(new Phase("central", 1, THREADS, Phase.CENTRAL_TRIGGER_HOURS));
            java.util.concurrent.atomic.AtomicIntegerArray starts = new java.util.concurrent.atomic.AtomicIntegerArray(THREADS);
            // Half the threads register a store, the other half race to open the gate.
            hammer(thread -> {
                if (thread % 2 == 0) {
                    gate.whenOpen(() -> starts.incrementAndGet(thread));
                } else {
                    gate.open();
                }
            });

            assertThat(gate.isOpen()).isTrue();
            for (int thread = 0; thread < THREADS; thread++) {
                assertThat(starts.get(thread)).as("store of thread %d", thread).isEqualTo(thread % 2 == 0 ? 1 : 0);
            }
        }
    }

    @Test
    void csvSinkWritesEveryRecordHandedOverByManyThreads() throws Exception {
        Path file = dir.resolve("hammer.csv");
        CsvSink sink = CsvSink.to(file);
        List<CsvSink.Buffer> buffers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            buffers.add(sink.buffer());
        }
        hammer(thread -> {
            CsvSink.Buffer buffer = buffers.get(thread);
            for (int i = 0; i < PER_THREAD; i++) {
                buffer.add(1_700_000_000_000L + i, RequestType.POST, 1_000L * i + 7, 201, thread + 1);
            }
        });
        buffers.forEach(CsvSink.Buffer::flush);
        sink.close();

        List<String> lines = Files.readAllLines(file);
        assertThat(lines).hasSize(1 + THREADS * PER_THREAD);
        Map<String, Long> perStore = lines.stream().skip(1)
                .collect(Collectors.groupingBy(line -> line.substring(line.lastIndexOf(',') + 1), Collectors.counting()));
        assertThat(perStore).hasSize(THREADS).allSatisfy((store, count) -> assertThat(count).isEqualTo(PER_THREAD));
        assertThat(lines).contains("1700000000003,POST,3.007,201,1");
    }

    private interface Work {
        void run(int thread) throws Exception;
    }

    private static void hammer(Work work) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int index = t;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    work.run(index);
                } catch (Throwable e) {
                    errors.add(e);
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(errors).isEmpty();
    }
}
