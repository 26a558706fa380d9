package com.supermarket.loadclient.run;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import com.supermarket.loadclient.result.RequestType;

/**
 * One store: waits for its phase, then sends nine hours of purchases (plus the GETs the ratio
 * asks for), each as soon as the previous one answered (closed loop) or at its scheduled time
 * (open model, latency counted from the scheduled time so a slow server cannot hide queueing).
 * Opens the central and west gates when it has sent 3 and 5 hours of purchases.
 * <p>
 * Thread-safety: runs on its own (virtual) thread and owns its factory, metrics and CSV buffer;
 * shares only thread-safe objects (client, gates, tally, counter).
 */
final class StoreWorker implements Runnable {

    private final int store;
    private final RunSettings settings;
    private final HttpClient client;
    private final PhaseGate ownGate;
    private final PhaseGate centralGate;
    private final PhaseGate westGate;
    private final RequestFactory requests;
    private final StoreMetrics metrics;
    private final CsvSink.Buffer csv;
    private final FailureTally failures;
    private final LongAdder completed;
    private final long runStartNanos;
    private final long runStartEpochMillis;
    private final Duration timeout;
    private final long paceNanos;
    private final String base;
    private long nextSendNanos;

    StoreWorker(int store, RunSettings settings, HttpClient client, PhaseGate ownGate, PhaseGate centralGate,
            PhaseGate westGate, RequestFactory requests, StoreMetrics metrics, CsvSink.Buffer csv,
            FailureTally failures, LongAdder completed, long runStartNanos, long runStartEpochMillis) {
        this.store = store;
        this.settings = settings;
        this.client = client;
        this.ownGate = ownGate;
        this.centralGate = centralGate;
        this.westGate = westGate;
        this.requests = requests;
        this.metrics = metrics;
        this.csv = csv;
        this.failures = failures;
        this.completed = completed;
        this.runStartNanos = runStartNanos;
        this.runStartEpochMillis = runStartEpochMillis;
        String url = settings.baseUrl().toString();
        this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        this.timeout = Duration.ofMillis(Math.round(settings.parameters().timeoutSeconds() * 1000));
        // Open model: every store keeps the same pace, so the target rate is reached once all
        // phases have started (a quarter of it in the east phase, as real time zones would).
        this.paceNanos = settings.openModel()
                ? Math.round(1e9 * settings.parameters().maxStores() / settings.parameters().rate())
                : 0;
    }

    @Override
    public void run() {
        try {
            ownGate.awaitOpen();
            nextSendNanos = System.nanoTime();
            int purchasesPerHour = settings.parameters().purchasesPerHour();
            int posts = settings.postsPerStore();
            long getsSent = 0;
            for (int sent = 1; sent <= posts; sent++) {
                send(RequestType.POST, requests.purchasePath(store), requests.purchaseBody());
                if (sent == Phase.CENTRAL_TRIGGER_HOURS * purchasesPerHour) {
                    centralGate.open();
                }
                if (sent == Phase.WEST_TRIGGER_HOURS * purchasesPerHour) {
                    westGate.open();
                }
                for (long due = settings.getsAfter(sent); getsSent < due; getsSent++) {
                    if (getsSent % 2 == 0) {
                        send(RequestType.GET_STORE, requests.storeItemsPath(store), null);
                    } else {
                        send(RequestType.GET_TOP10, requests.topStoresPath(), null);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void send(RequestType type, String path, String body) throws InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout);
        if (body != null) {
            request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        } else {
            request.GET();
        }
        long start = startTime();
        int status = 0;
        try {
            HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
            status = response.statusCode();
            long micros = (System.nanoTime() - start) / 1000;
            if (status >= 200 && status < 300) {
                metrics.recordSuccess(type, micros);
            } else {
                failures.status(status, type, path, response.body());
            }
            csv.add(epochMillis(start), type, micros, status, store);
        } catch (IOException e) {
            failures.error(e, type, path);
            csv.add(epochMillis(start), type, (System.nanoTime() - start) / 1000, status, store);
        } finally {
            completed.increment();
        }
    }

    /** Closed loop: now. Open model: the scheduled time, after waiting for it if it is ahead. */
    private long startTime() {
        if (paceNanos == 0) {
            return System.nanoTime();
        }
        long intended = nextSendNanos;
        nextSendNanos += paceNanos;
        for (long wait = intended - System.nanoTime(); wait > 0; wait = intended - System.nanoTime()) {
            LockSupport.parkNanos(wait);
        }
        return intended;
    }

    private long epochMillis(long nanos) {
        return runStartEpochMillis + (nanos - runStartNanos) / 1_000_000L;
    }
}
