package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;

/**
 * One run of the standard load profile: one virtual thread per store, held back by the phase
 * gates, a sampler thread for the timeline and progress bar, and a CSV writer thread.
 * Not reusable: {@link #execute()} once. Thread-safety: call from one thread.
 */
final class LoadRun {

    private final RunSettings settings;
    private final HttpClient client;
    private final PrintStream err;

    LoadRun(RunSettings settings, HttpClient client, PrintStream err) {
        this.settings = settings;
        this.client = client;
        this.err = err;
    }

    RunResult execute() throws InterruptedException {
        int maxStores = settings.parameters().maxStores();
        List<Phase> phases = Phase.split(maxStores);
        List<PhaseGate> gates = phases.stream().map(PhaseGate::new).toList();
        StoreMetrics[] metrics = new StoreMetrics[maxStores];
        CsvSink.Buffer[] buffers = new CsvSink.Buffer[maxStores];
        FailureTally failures = new FailureTally(err);
        LongAdder completed = new LongAdder();
        SplittableRandom seeds = new SplittableRandom(settings.seed());

        try (CsvSink csv = CsvSink.to(settings.csv())) {
            Instant startedAt = Instant.now();
            long startNanos = System.nanoTime();
            long startEpochMillis = startedAt.toEpochMilli();
            Sampler sampler = new Sampler(metrics, failures, completed, settings.expectedRequests(), gates,
                    startNanos, settings.progress(), err);
            List<Thread> threads = new ArrayList<>(maxStores);
            for (int store = 1; store <= maxStores; store++) {
                int index = store - 1;
                metrics[index] = new StoreMetrics();
                buffers[index] = csv.buffer();
                PhaseGate own = gateOf(gates, store);
                StoreWorker worker = new StoreWorker(store, settings, client, own, gates.get(1), gates.get(2),
                        new RequestFactory(settings.parameters(), seeds.split()), metrics[index], buffers[index],
                        failures, completed, startNanos, startEpochMillis);
                threads.add(Thread.ofVirtual().name("store-" + store).unstarted(worker));
            }
            ScheduledExecutorService sampling = Executors.newSingleThreadScheduledExecutor(
                    Thread.ofPlatform().name("sampler").daemon().factory());
            long period = settings.sampleInterval().toNanos();
            sampling.scheduleAtFixedRate(sampler::sample, period, period, TimeUnit.NANOSECONDS);
            gates.get(0).open();
            threads.forEach(Thread::start);
            try {
                for (Thread thread : threads) {
                    thread.join();
                }
            } finally {
                threads.forEach(Thread::interrupt);
                sampling.shutdownNow();
                sampling.awaitTermination(1, TimeUnit.MINUTES);
            }
            long endNanos = System.nanoTime();
            sampler.sample();
            sampler.finish();
            for (CsvSink.Buffer buffer : buffers) {
                buffer.flush();
            }
            // Closing waits for the writer, so the result reports its whole busy time.
            csv.close();
            return result(startedAt, startNanos, endNanos, metrics, failures, sampler, gates, csv.busySeconds());
        }
    }

    private RunResult result(Instant startedAt, long startNanos, long endNanos, StoreMetrics[] metrics,
            FailureTally failures, Sampler sampler, List<PhaseGate> gates, double csvBusySeconds) {
        Map<RequestType, LatencySummary> latency = new EnumMap<>(RequestType.class);
        long successful = 0;
        for (RequestType type : RequestType.values()) {
            long count = 0;
            long sum = 0;
            long max = 0;
            for (StoreMetrics store : metrics) {
                count += store.count(type);
                sum += store.sumMicros(type);
                max = Math.max(max, store.maxMicros(type));
            }
            successful += count;
            if (count > 0) {
                latency.put(type, LatencyStats.summarize(sampler.total(type), count, sum, max));
            }
        }
        long failed = failures.total();
        double wallSeconds = Math.max(1e-9, (endNanos - startNanos) / 1e9);
        List<PhaseStart> phaseStarts = gates.stream()
                .map(gate -> new PhaseStart(gate.phase().name(), gate.phase().firstStore(), gate.phase().lastStore(),
                        gate.phase().size() == 0 ? -1 : gate.openedAfterSeconds(startNanos)))
                .toList();
        return new RunResult(settings.label(), settings.baseUrl().toString(), settings.openModel() ? "open" : "closed",
                settings.parameters(), startedAt, wallSeconds, successful, failed,
                (successful + failed) / wallSeconds, successful / wallSeconds,
                failures.byStatus(), failures.byError(), latency, phaseStarts, sampler.timeline(), csvBusySeconds);
    }

    private static PhaseGate gateOf(List<PhaseGate> gates, int store) {
        return gates.stream().filter(gate -> gate.phase().contains(store)).findFirst().orElseThrow();
    }

    /** The client every store shares; HTTP/1.1 keeps one connection per concurrent request. */
    static HttpClient newHttpClient(Duration connectTimeout) {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .build();
    }
}
