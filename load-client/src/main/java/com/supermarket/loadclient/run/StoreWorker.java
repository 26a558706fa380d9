package com.supermarket.loadclient.run;

import java.net.http.HttpTimeoutException;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import com.supermarket.loadclient.result.RequestType;

/**
 * One store (one till): once its phase opens, sends nine hours of purchases (plus the GETs the
 * ratio asks for), each as soon as the previous one answered (closed loop) or at its scheduled
 * time (open model, latency counted from the scheduled time so a slow server cannot hide
 * queueing). Opens the central and west gates when it has sent 3 and 5 hours of purchases.
 * A failed request is sent again per the {@link RetryPolicy}, with the same body and the same
 * {@code Idempotency-Key}, so the server stores and counts a retried purchase once; its latency
 * runs from its first attempt to its final answer, which is what the till's customer waits. A
 * purchase that fails for good is counted as maybe accepted or refused by what its attempts were
 * answered ({@link FailureTally#purchaseFailed}). A store chosen by {@code --late-retries} also
 * re-sends its first accepted purchase late ({@link LateRetry}), sending extra purchases after its
 * profile when the re-send waits for a count of them.
 * <p>
 * A state machine rather than a thread: every step runs on the store's event loop (the
 * connection's callbacks, the timeout, the pacing and backoff timers), so a store needs no lock
 * and costs no thread. Thread-safety: confined to that loop after {@link #start}; shares only
 * thread-safe objects (gates, tally, counters, latch) and its loop's single-writer metrics.
 */
final class StoreWorker implements HttpConnection.Listener {

    private final int store;
    private final RunSettings settings;
    private final HttpConnection connection;
    private final PhaseGate centralGate;
    private final PhaseGate westGate;
    private final RequestFactory requests;
    private final SplittableRandom jitter;
    private final LoopMetrics metrics;
    private final CsvSink.Buffer csv;
    private final FailureTally failures;
    private final LongAdder completed;
    private final RunContext run;
    private final CountDownLatch done;
    private final long timeoutNanos;
    private final long paceNanos;
    private final int posts;
    private final int purchasesPerHour;
    private final RetryPolicy retry;
    private final String keyPrefix;
    private final long getOffset;
    private final StringBuilder key = new StringBuilder(40);
    // Null unless this store re-sends an accepted purchase late: the hot path only tests for null.
    private final LateRetry late;
    private int postsSent;
    private long getsSent;
    private long nextSendNanos;
    // The request in flight: what it is, when it (first) started, which attempt this is.
    private RequestType type;
    private String path;
    private CharSequence body;
    private long requestStartNanos;
    private long attemptStartNanos;
    private int attempt;
    // Whether an attempt of the POST in flight got an answer that promises nothing either way.
    private boolean promisedNothing;
    // When the attempt in flight times out; 0 when none is in flight. Checked by the loop's
    // periodic sweep, which costs less than a timer per request (one scheduled task per request
    // showed in the profile: a priority-queue insert and removal each time).
    private long deadlineNanos;

    StoreWorker(int store, RunSettings settings, HttpConnection connection, PhaseGate centralGate, PhaseGate westGate,
            RequestFactory requests, SplittableRandom jitter, LoopMetrics metrics, CsvSink.Buffer csv,
            FailureTally failures, LongAdder completed, RunContext run, CountDownLatch done, LateRetry late) {
        this.store = store;
        this.late = late;
        this.settings = settings;
        this.connection = connection;
        this.centralGate = centralGate;
        this.westGate = westGate;
        this.requests = requests;
        this.jitter = jitter;
        this.metrics = metrics;
        this.csv = csv;
        this.failures = failures;
        this.completed = completed;
        this.run = run;
        this.done = done;
        this.timeoutNanos = Math.round(settings.parameters().timeoutSeconds() * 1e9);
        // Open model: every store keeps the same pace, so the target rate is reached once all
        // phases have started (a quarter of it in the east phase, as real time zones would).
        this.paceNanos = settings.openModel()
                ? Math.round(1e9 * settings.parameters().maxStores() / settings.parameters().rate())
                : 0;
        this.posts = settings.postsPerStore();
        this.purchasesPerHour = settings.parameters().purchasesPerHour();
        this.retry = settings.retryPolicy();
        this.keyPrefix = run.id() + "-" + store + "-";
        // Each store asks at its own point of the GET cycle: the stores of a phase open together
        // and keep the same pace, so at one point they would all ask after the same POST, a burst
        // of GETs once per cycle (paced at 3,000/s, 128 GETs within 85 ms every 850 ms).
        this.getOffset = jitter.nextLong(RunSettings.GET_OFFSETS);
    }

    /** Called once the store's phase opens; hands the store over to its event loop. */
    void start() {
        connection.loop().execute(() -> {
            // Open model: each store's first send falls at a random point of its first pace
            // interval, so that the stores of a phase, opened together, do not all send in step
            // (real tills do not synchronise; in step they arrive as one burst per interval).
            nextSendNanos = System.nanoTime() + (paceNanos == 0 ? 0 : jitter.nextLong(paceNanos));
            next();
        });
    }

    /** Picks the next request (a due late re-send, then GETs due after the last POST), or finishes the store. */
    private void next() {
        if (late != null && late.due(System.nanoTime())) {
            late.sending();
            key.setLength(0);
            key.append(late.key());
            begin(RequestType.POST, late.path(), late.body());
        } else if (getsSent < settings.getsAfter(postsSent, getOffset)) {
            boolean ownStore = getsSent % 2 == 0;
            begin(ownStore ? RequestType.GET_STORE : RequestType.GET_TOP10,
                    ownStore ? requests.storeItemsPath(store) : requests.topStoresPath(), null);
        } else if (postsSent < posts || (late != null && late.wantsMorePurchases())) {
            key.setLength(0);
            key.append(keyPrefix).append(postsSent + 1);
            if (late != null) {
                late.purchaseSent();
            }
            begin(RequestType.POST, requests.purchasePath(store), requests.purchaseBody());
        } else if (late != null && late.nanosUntilDue(System.nanoTime()) >= 0) {
            connection.loop().schedule(this::next, late.nanosUntilDue(System.nanoTime()), TimeUnit.NANOSECONDS);
        } else {
            done.countDown();
        }
    }

    private void begin(RequestType requestType, String requestPath, CharSequence requestBody) {
        type = requestType;
        path = requestPath;
        body = requestBody;
        attempt = 0;
        promisedNothing = false;
        if (paceNanos == 0) {
            requestStartNanos = System.nanoTime();
            send();
            return;
        }
        // Open model: the latency clock starts at the intended send time, even when late.
        requestStartNanos = nextSendNanos;
        nextSendNanos += paceNanos;
        long wait = requestStartNanos - System.nanoTime();
        if (wait > 0) {
            connection.loop().schedule(this::send, wait, TimeUnit.NANOSECONDS);
        } else {
            send();
        }
    }

    private void send() {
        attempt++;
        attemptStartNanos = attempt == 1 ? requestStartNanos : System.nanoTime();
        deadlineNanos = System.nanoTime() + timeoutNanos;
        connection.send(type == RequestType.POST ? "POST" : "GET", path, body,
                type == RequestType.POST ? key : null, type == RequestType.GET_TOP10, this);
    }

    /** Called by the loop's sweep: fails the attempt in flight if its time is up. */
    void checkTimeout(long now) {
        if (deadlineNanos != 0 && now - deadlineNanos >= 0) {
            connection.abandon();
            onFailure(new HttpTimeoutException("no answer within " + settings.parameters().timeoutSeconds() + " s"));
        }
    }

    @Override
    public void onResponse(int status, String retryAfter, String errorBody) {
        deadlineNanos = 0;
        long now = System.nanoTime();
        csv.add(run.epochMillis(attemptStartNanos), type, (now - attemptStartNanos) / 1000, status, store);
        if (status >= 200 && status < 300) {
            run.succeeded();
            if (late != null && late.inFlight()) {
                late.answered(true);
                next();
                return;
            }
            metrics.recordSuccess(type, (now - requestStartNanos) / 1000);
            if (late != null && type == RequestType.POST) {
                late.accepted(key, path, body, now);
            }
            finish();
            return;
        }
        // A 5xx may come after the purchase was published (a 503 after a lost confirm); a 4xx is a refusal.
        promisedNothing |= status >= 500;
        failures.status(status, type, path, errorBody);
        retryOrGiveUp(RetryPolicy.retryableStatus(status), retryAfter);
    }

    @Override
    public void onFailure(Throwable error) {
        deadlineNanos = 0;
        csv.add(run.epochMillis(attemptStartNanos), type, (System.nanoTime() - attemptStartNanos) / 1000, 0, store);
        failures.error(error, type, path);
        // Sent, or maybe sent, and then no answer: a timeout, a connection closed or reset.
        promisedNothing |= !RetryPolicy.isConnectFailure(error);
        // A refused connection is retried only once the server has answered this run: against
        // a server that was never there, retrying would only make the run slow to say so.
        retryOrGiveUp(!RetryPolicy.isConnectFailure(error) || run.anySucceeded(), null);
    }

    private void retryOrGiveUp(boolean retryable, String retryAfter) {
        // A late re-send is not a request of its own: it is kept out of the per-request counts.
        boolean lateRetry = late != null && late.inFlight();
        if (attempt == 1 && !lateRetry) {
            failures.firstTryFailed();
        }
        if (retryable && attempt <= retry.retries() && run.retrying()) {
            failures.retried();
            connection.loop().schedule(this::send, retry.delayNanos(attempt, retryAfter, jitter), TimeUnit.NANOSECONDS);
            return;
        }
        if (lateRetry) {
            late.answered(false);
            connection.loop().execute(this::next);
            return;
        }
        failures.gaveUp();
        if (type == RequestType.POST) {
            failures.purchaseFailed(promisedNothing);
        }
        // Through the loop's queue: a failure can be reported while the request is being sent.
        connection.loop().execute(this::finish);
    }

    /** The request is answered for good: advance the clock, open gates, go on. */
    private void finish() {
        completed.increment();
        if (type == RequestType.POST) {
            // Failed POSTs count as sent: the till did send them.
            postsSent++;
            if (postsSent == Phase.CENTRAL_TRIGGER_HOURS * purchasesPerHour) {
                centralGate.open();
            }
            if (postsSent == Phase.WEST_TRIGGER_HOURS * purchasesPerHour) {
                westGate.open();
            }
        } else {
            getsSent++;
        }
        next();
    }
}
