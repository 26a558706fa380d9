package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.netty.channel.EventLoop;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.Pacing;
import com.supermarket.loadclient.result.PhaseStart;
import com.supermarket.loadclient.result.PurchaseOutcomes;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;

/**
 * One run of the standard load profile: one {@link StoreWorker} per store on a few event loops,
 * held back by the phase gates (opened by the stores' purchase counts, or in a timed run by the
 * clock), a sampler thread for the timeline, the progress bar and the histogram log, and a CSV
 * writer thread. A {@link RunStop} ends it early: the stores start nothing more, the requests in
 * flight get {@link #STOP_GRACE} to be answered, and the result covers the run until then. Not
 * reusable: {@link #execute()} once. Thread-safety: call from one thread; the stop may be
 * requested from any.
 */
final class LoadRun {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    /** How long a stopped run waits for the answers in flight before abandoning them. */
    static final Duration STOP_GRACE = Duration.ofSeconds(5);

    private static final long STOP_POLL_MILLIS = 50;

    private final RunSettings settings;
    private final PrintStream err;
    private final RunStop stop;
    private final LiveMetrics live;

    LoadRun(RunSettings settings, PrintStream err) {
        this(settings, err, new RunStop());
    }

    LoadRun(RunSettings settings, PrintStream err, RunStop stop) {
        this(settings, err, stop, null);
    }

    /** @param live where the run's live metrics go ({@code --metrics-port}), or null for nowhere */
    LoadRun(RunSettings settings, PrintStream err, RunStop stop, LiveMetrics live) {
        this.settings = settings;
        this.err = err;
        this.stop = stop;
        this.live = live;
    }

    RunResult execute() throws InterruptedException {
        int maxStores = settings.parameters().maxStores();
        List<Phase> phases = Phase.split(maxStores);
        List<PhaseGate> gates = phases.stream().map(PhaseGate::new).toList();
        FailureTally failures = new FailureTally(err, live);
        LongAdder completed = new LongAdder();
        if (live != null) {
            live.watch(completed);
        }
        CountDownLatch done = new CountDownLatch(maxStores);
        SplittableRandom seeds = new SplittableRandom(settings.seed());
        LateRetryPlan latePlan = settings.lateRetries();
        LateRetry.Tally lateRetries = new LateRetry.Tally(latePlan.stores());

        try (HttpTransport transport = new HttpTransport(settings.baseUrl(), settings.ioThreads(), CONNECT_TIMEOUT);
                CsvSink csv = CsvSink.to(settings.csv())) {
            List<EventLoop> loops = transport.loops();
            LoopMetrics[] metrics = new LoopMetrics[loops.size()];
            for (int i = 0; i < metrics.length; i++) {
                metrics[i] = new LoopMetrics(live);
            }
            CsvSink.Buffer[] buffers = new CsvSink.Buffer[maxStores];
            Instant startedAt = Instant.now();
            long startNanos = System.nanoTime();
            RunContext run = new RunContext(startNanos, startedAt.toEpochMilli());
            double cpuBefore = ProcessCpu.ownSeconds();
            Map<String, Double> othersBefore = ProcessCpu.secondsOf(settings.watchedPids());
            HistogramLog histogramLog = HistogramLog.to(settings.histogramLog(), startedAt.toEpochMilli(),
                    settings.label());
            Sampler sampler = new Sampler(metrics, maxStores, failures, completed, settings.expectedRequests(),
                    Math.round(settings.parameters().durationSeconds() * 1e9), gates, done, startNanos,
                    settings.progress(), err, run, settings.pauseRetriesAfter(), histogramLog, sentTypes());
            List<List<StoreWorker>> storesOfLoop = new ArrayList<>();
            loops.forEach(loop -> storesOfLoop.add(new ArrayList<>()));
            List<StoreWorker> workers = new ArrayList<>();
            for (int store = 1; store <= maxStores; store++) {
                int index = store - 1;
                int loop = index % loops.size();
                buffers[index] = csv.buffer();
                PhaseGate gate = gateOf(gates, store);
                StoreWorker worker = new StoreWorker(store, settings, connections(transport, loops.get(loop), store),
                        gates.get(1), gates.get(2), new RequestFactory(settings.parameters(), seeds.split()),
                        seeds.split(), metrics[loop], buffers[index], failures, completed, run, done,
                        latePlan.chosen(store) ? new LateRetry(latePlan, lateRetries) : null,
                        settings.timed() ? settings.storesCloseAfterNanos(gate.phase()) : 0);
                storesOfLoop.get(loop).add(worker);
                workers.add(worker);
                gate.whenOpen(worker::start);
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
            LongAdder unanswered = new LongAdder();
            stop.whenRequested(() -> {
                err.printf(Locale.ROOT, "%n[load-client] %s: stopping; waiting up to %d s for the requests in flight%n",
                        stop.reason(), STOP_GRACE.toSeconds());
                stopStores(workers);
            });
            try {
                openGates(gates, sampling);
                awaitStores(done, workers, unanswered);
            } finally {
                sampling.shutdownNow();
                sampling.awaitTermination(1, TimeUnit.MINUTES);
            }
            long endNanos = System.nanoTime();
            double clientCpu = ProcessCpu.ownSeconds() - cpuBefore;
            Map<String, Double> othersCpu = ProcessCpu.used(othersBefore, ProcessCpu.secondsOf(settings.watchedPids()));
            sampler.sample();
            sampler.finish();
            histogramLog.close();
            for (CsvSink.Buffer buffer : buffers) {
                buffer.flush();
            }
            // Closing waits for the writer, so the result reports its whole busy time.
            csv.close();
            return result(startedAt, startNanos, endNanos, metrics, failures, sampler, gates, csv.busySeconds(),
                    clientCpu, othersCpu, lateRetries, unanswered.sum());
        }
    }

    /**
     * Opens the first phase (every phase with {@code --all-stores-at-once}); in a timed run the
     * clock opens the others, in a run of a set count the stores' purchases do.
     */
    private void openGates(List<PhaseGate> gates, ScheduledExecutorService clock) {
        for (PhaseGate gate : gates) {
            long after = settings.timed() ? settings.phaseOpensAfterNanos(gate.phase())
                    : settings.allStoresAtOnce() || gate == gates.get(0) ? 0 : -1;
            if (after == 0) {
                gate.open();
            } else if (after > 0) {
                clock.schedule(() -> {
                    if (!stop.requested()) {
                        gate.open();
                    }
                }, after, TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * Waits until every store has finished; on a stop (which tells the stores at once to start
     * nothing more), abandons what is still unanswered after the {@link #STOP_GRACE}.
     */
    private void awaitStores(CountDownLatch done, List<StoreWorker> workers, LongAdder unanswered)
            throws InterruptedException {
        long abandonAt = 0;
        boolean stopping = false;
        while (!done.await(STOP_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
            if (!stopping && stop.requested()) {
                stopping = true;
                abandonAt = System.nanoTime() + STOP_GRACE.toNanos();
            } else if (stopping && System.nanoTime() - abandonAt >= 0) {
                workers.forEach(worker -> worker.loop().execute(() -> worker.abandon(unanswered)));
                done.await();
                return;
            }
        }
    }

    /** Tells every store to start nothing more; nothing to do once the run is over and its loops are gone. */
    private static void stopStores(List<StoreWorker> workers) {
        try {
            workers.forEach(worker -> worker.loop().execute(worker::stop));
        } catch (RejectedExecutionException e) {
            // The run has ended (a stop requested after it, e.g. after the client's warm-up).
        }
    }

    private RunResult result(Instant startedAt, long startNanos, long endNanos, LoopMetrics[] metrics,
            FailureTally failures, Sampler sampler, List<PhaseGate> gates, double csvBusySeconds, double clientCpu,
            Map<String, Double> othersCpu, LateRetry.Tally lateRetries, long unanswered) {
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
                        failures.purchasesMaybeAccepted(), failures.purchasesRefused(), lateRetries.snapshot()),
                stop.requested(), unanswered, pacing(metrics), null, List.of(), null);
    }

    private Pacing pacing(LoopMetrics[] metrics) {
        if (!settings.openModel()) {
            return Pacing.none();
        }
        long starts = 0;
        long late = 0;
        long lateSum = 0;
        long lateMax = 0;
        for (LoopMetrics loop : metrics) {
            starts += loop.pacedStarts();
            late += loop.lateStarts();
            lateSum += loop.lateSumNanos();
            lateMax = Math.max(lateMax, loop.lateMaxNanos());
        }
        return new Pacing(starts, late, late == 0 ? 0 : lateSum / 1e6 / late, lateMax / 1e6);
    }

    /** The request types the run sends. */
    private List<RequestType> sentTypes() {
        return settings.parameters().getRatio() > 0 ? List.of(RequestType.values()) : List.of(RequestType.POST);
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

    /**
     * The store's connections (one per request it may have in flight), carrying its till key (and
     * the manager key for its top-10 queries) when configured.
     */
    private HttpConnection[] connections(HttpTransport transport, EventLoop loop, int store) {
        TillKeyFile keys = settings.tillKeys();
        HttpConnection[] connections = new HttpConnection[settings.parameters().maxInFlightPerStore()];
        for (int i = 0; i < connections.length; i++) {
            connections[i] = keys == null ? new HttpConnection(transport, loop)
                    : new HttpConnection(transport, loop, keys.storeHeader(store), keys.managerHeader());
        }
        return connections;
    }

    private static PhaseGate gateOf(List<PhaseGate> gates, int store) {
        return gates.stream().filter(gate -> gate.phase().contains(store)).findFirst().orElseThrow();
    }
}
