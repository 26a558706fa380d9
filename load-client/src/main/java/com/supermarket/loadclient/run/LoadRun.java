package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.netty.channel.EventLoop;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;

/**
 * One run of the standard load profile: one {@link StoreWorker} per store on a few event loops,
 * held back by the phase gates, a sampler thread for the timeline and progress bar, and a CSV
 * writer thread. Not reusable: {@link #execute()} once. Thread-safety: call from one thread.
 */
final class LoadRun {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    private final RunSettings settings;
    private final PrintStream err;

    LoadRun(RunSettings settings, PrintStream err) {
        this.settings = settings;
        this.err = err;
    }

    RunResult execute() throws InterruptedException {
        int maxStores = settings.parameters().maxStores();
        List<Phase> phases = Phase.split(maxStores);
        List<PhaseGate> gates = phases.stream().map(PhaseGate::new).toList();
        FailureTally failures = new FailureTally(err);
        LongAdder completed = new LongAdder();
        CountDownLatch done = new CountDownLatch(maxStores);
        SplittableRandom seeds = new SplittableRandom(settings.seed());
        LateRetryPlan latePlan = settings.lateRetries();
        LateRetry.Tally lateRetries = new LateRetry.Tally(latePlan.stores());

        try (HttpTransport transport = new HttpTransport(settings.baseUrl(), settings.ioThreads(), CONNECT_TIMEOUT);
                CsvSink csv = CsvSink.to(settings.csv())) {
            List<EventLoop> loops = transport.loops();
            LoopMetrics[] metrics = new LoopMetrics[loops.size()];
            for (int i = 0; i < metrics.length; i++) {
                metrics[i] = new LoopMetrics();
            }
            CsvSink.Buffer[] buffers = new CsvSink.Buffer[maxStores];
            Instant startedAt = Instant.now();
            long startNanos = System.nanoTime();
            RunContext run = new RunContext(startNanos, startedAt.toEpochMilli());
            double cpuBefore = ProcessCpu.ownSeconds();
            Map<String, Double> othersBefore = ProcessCpu.secondsOf(settings.watchedPids());
            Sampler sampler = new Sampler(metrics, maxStores, failures, completed, settings.expectedRequests(), gates,
                    done, startNanos, settings.progress(), err, run, settings.pauseRetriesAfter());
            List<List<StoreWorker>> storesOfLoop = new ArrayList<>();
            loops.forEach(loop -> storesOfLoop.add(new ArrayList<>()));
            for (int store = 1; store <= maxStores; store++) {
                int index = store - 1;
                int loop = index % loops.size();
                buffers[index] = csv.buffer();
                StoreWorker worker = new StoreWorker(store, settings, connection(transport, loops.get(loop), store),
                        gates.get(1), gates.get(2), new RequestFactory(settings.parameters(), seeds.split()),
                        seeds.split(), metrics[loop], buffers[index], failures, completed, run, done,
                        latePlan.chosen(store) ? new LateRetry(latePlan, lateRetries) : null);
                storesOfLoop.get(loop).add(worker);
                gateOf(gates, store).whenOpen(worker::start);
            }
            sweepTimeouts(loops, storesOfLoop);
            for (int i = 0; i < loops.size(); i++) {
                EventLoop loop = loops.get(i);
                new LoopLag(metrics[i], System::nanoTime, (nanos, probe) -> loop.schedule(probe, nanos, TimeUnit.NANOSECONDS))
                        .start();
            }
            ScheduledExecutorService sampling = Executors.newSingleThreadScheduledExecutor(
                    Thread.ofPlatform().name("sampler").daemon().factory());
            long period = settings.sampleInterval().toNanos();
            sampling.scheduleAtFixedRate(sampler::sample, period, period, TimeUnit.NANOSECONDS);
            try {
                if (settings.allStoresAtOnce()) {
                    gates.forEach(PhaseGate::open);
                } else {
                    gates.get(0).open();
                }
                done.await();
            } finally {
                sampling.shutdownNow();
                sampling.awaitTermination(1, TimeUnit.MINUTES);
            }
            long endNanos = System.nanoTime();
            double clientCpu = ProcessCpu.ownSeconds() - cpuBefore;
            Map<String, Double> othersCpu = ProcessCpu.used(othersBefore, ProcessCpu.secondsOf(settings.watchedPids()));
            sampler.sample();
            sampler.finish();
            for (CsvSink.Buffer buffer : buffers) {
                buffer.flush();
            }
            // Closing waits for the writer, so the result reports its whole busy time.
            csv.close();
            return result(startedAt, startNanos, endNanos, metrics, failures, sampler, gates, csv.busySeconds(),
                    clientCpu, othersCpu, lateRetries);
        }
    }

    private RunResult result(Instant startedAt, long startNanos, long endNanos, LoopMetrics[] metrics,
            FailureTally failures, Sampler sampler, List<PhaseGate> gates, double csvBusySeconds, double clientCpu,
            Map<String, Double> othersCpu, LateRetry.Tally lateRetries) {
        Map<RequestType, LatencySummary> latency = new EnumMap<>(RequestType.class);
        long successful = 0;
        for (RequestType type : RequestType.values()) {
            long count = 0;
            long sum = 0;
            long max = 0;
            for (LoopMetrics loop : metrics) {
                count += loop.count(type);
                sum += loop.sumMicros(type);
                max = Math.max(max, loop.maxMicros(type));
            }
            successful += count;
            if (count > 0) {
                latency.put(type, LatencyStats.summarize(sampler.total(type), count, sum, max));
            }
        }
        long failed = failures.finalFailures();
        double wallSeconds = Math.max(1e-9, (endNanos - startNanos) / 1e9);
        List<PhaseStart> phaseStarts = gates.stream()
                .map(gate -> new PhaseStart(gate.phase().name(), gate.phase().firstStore(), gate.phase().lastStore(),
                        gate.phase().size() == 0 ? -1 : gate.openedAfterSeconds(startNanos)))
                .toList();
        return new RunResult(settings.label(), settings.baseUrl().toString(), settings.openModel() ? "open" : "closed",
                settings.parameters(), startedAt, wallSeconds, successful, failed,
                (successful + failed) / wallSeconds, successful / wallSeconds,
                failures.byStatus(), failures.byError(), latency, phaseStarts, sampler.timeline(), csvBusySeconds,
                failures.firstTryFailures(), failures.retries(), clientCpu, othersCpu, sampler.fullLoad(),
                // A POST is recorded as a success once, when its purchase is accepted; late re-sends are not recorded.
                new PurchaseOutcomes(latency.containsKey(RequestType.POST) ? latency.get(RequestType.POST).count() : 0,
                        failures.purchasesMaybeAccepted(), failures.purchasesRefused(), lateRetries.snapshot()));
    }

    /** Each loop checks its stores' deadlines a few times per timeout (at most every 100 ms). */
    private void sweepTimeouts(List<EventLoop> loops, List<List<StoreWorker>> storesOfLoop) {
        long period = Math.max(1_000_000L, Math.min(100_000_000L,
                Math.round(settings.parameters().timeoutSeconds() * 1e9 / 10)));
        for (int i = 0; i < loops.size(); i++) {
            StoreWorker[] stores = storesOfLoop.get(i).toArray(StoreWorker[]::new);
            loops.get(i).scheduleAtFixedRate(() -> {
                long now = System.nanoTime();
                for (StoreWorker store : stores) {
                    store.checkTimeout(now);
                }
            }, period, period, TimeUnit.NANOSECONDS);
        }
    }

    /** The store's connection, carrying its till key (and the manager key for its top-10 queries) when configured. */
    private HttpConnection connection(HttpTransport transport, EventLoop loop, int store) {
        TillKeyFile keys = settings.tillKeys();
        return keys == null ? new HttpConnection(transport, loop)
                : new HttpConnection(transport, loop, keys.storeHeader(store), keys.managerHeader());
    }

    private static PhaseGate gateOf(List<PhaseGate> gates, int store) {
        return gates.stream().filter(gate -> gate.phase().contains(store)).findFirst().orElseThrow();
    }
}
