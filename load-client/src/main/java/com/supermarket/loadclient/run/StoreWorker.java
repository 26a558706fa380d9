package com.supermarket.loadclient.run;

import java.net.http.HttpTimeoutException;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.netty.channel.EventLoop;

import com.supermarket.loadclient.result.RequestType;

/**
 * One store (one till): once its phase opens, sends nine hours of purchases (plus the GETs the
 * ratio asks for), or in a timed run ({@code --duration}) purchases until its share of the
 * duration is over; each as soon as a connection is free (closed loop) or at its scheduled time
 * (open model, latency counted from the scheduled time so a slow server cannot hide queueing).
 * A store has {@code --max-in-flight-per-store} connections (one by default: a till waits for its
 * answer) and so at most that many requests in flight. In a run of a set count, opens the central
 * and west gates when it has had 3 and 5 hours of purchases answered.
 * A failed request is sent again per the {@link RetryPolicy}, with the same body and the same
 * {@code Idempotency-Key}, so the server stores and counts a retried purchase once; its latency
 * runs from its first attempt to its final answer, which is what the till's customer waits. A
 * purchase that fails for good is counted as maybe accepted or refused by what its attempts were
 * answered ({@link FailureTally#purchaseFailed}). A store chosen by {@code --late-retries} also
 * re-sends its first accepted purchase late ({@link LateRetry}), sending extra purchases after its
 * profile when the re-send waits for a count of them.
 * <p>
 * In the open model a request whose intended time comes while every connection of the store is
 * busy starts late, as soon as one is free, and is counted as a late start ({@link
 * LoopMetrics#recordPacedStart}); it is never dropped.
 * <p>
 * A state machine rather than a thread: every step runs on the store's event loop (the
 * connections' callbacks, the timeouts, the pacing and backoff timers, {@link #stop} and {@link
 * #abandon}), so a store needs no lock and costs no thread. Thread-safety: confined to that loop
 * after {@link #start}; shares only thread-safe objects (gates, tally, counters, latch) and its
 * loop's single-writer metrics.
 */
final class StoreWorker {

    /** What a store sends next. */
    private enum Next { LATE_RESEND, GET, POST, WAIT_FOR_LATE_RESEND, NOTHING }

    private final int store;
    private final RunSettings settings;
    private final EventLoop loop;
    private final Slot[] slots;
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
    private final boolean timed;
    private final long closesAfterNanos;
    private final RetryPolicy retry;
    private final String keyPrefix;
    private final long getOffset;
    // Null unless this store re-sends an accepted purchase late: the hot path only tests for null.
    private final LateRetry late;
    private int postsStarted;
    private int postsAnswered;
    private long getsStarted;
    private long nextSendNanos;
    private long closesAtNanos;
    // The pacing timer or the wait for a timed late re-send; null when none is pending.
    private ScheduledFuture<?> timer;
    private boolean stopped;
    private boolean finished;

    /**
     * @param connections      the store's connections, all on one loop: as many as requests it may
     *                         have in flight
     * @param closesAfterNanos in a timed run, when the store starts no more requests, from the run's start
     */
    StoreWorker(int store, RunSettings settings, HttpConnection[] connections, PhaseGate centralGate,
            PhaseGate westGate, RequestFactory requests, SplittableRandom jitter, LoopMetrics metrics,
            CsvSink.Buffer csv, FailureTally failures, LongAdder completed, RunContext run, CountDownLatch done,
            LateRetry late, long closesAfterNanos) {
        this.store = store;
        this.late = late;
        this.settings = settings;
        this.loop = connections[0].loop();
        this.slots = new Slot[connections.length];
        for (int i = 0; i < connections.length; i++) {
            slots[i] = new Slot(connections[i]);
        }
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
        this.timed = settings.timed();
        this.closesAfterNanos = closesAfterNanos;
        this.retry = settings.retryPolicy();
        this.keyPrefix = run.id() + "-" + store + "-";
        // Each store asks at its own point of the GET cycle: the stores of a phase open together
        // and keep the same pace, so at one point they would all ask after the same POST, a burst
        // of GETs once per cycle (paced at 3,000/s, 128 GETs within 85 ms every 850 ms).
        this.getOffset = jitter.nextLong(RunSettings.GET_OFFSETS);
    }

    EventLoop loop() {
        return loop;
    }

    /** Called once the store's phase opens; hands the store over to its event loop. */
    void start() {
        loop.execute(() -> {
            if (stopped) {
                return;
            }
            long now = System.nanoTime();
            closesAtNanos = run.startNanos() + closesAfterNanos;
            // Open model: each store's first send falls at a random point of its first pace
            // interval, so that the stores of a phase, opened together, do not all send in step
            // (real tills do not synchronise; in step they arrive as one burst per interval).
            nextSendNanos = now + (paceNanos == 0 ? 0 : jitter.nextLong(paceNanos));
            pump(false);
        });
    }

    /**
     * The run is being stopped (SIGINT, SIGTERM): starts nothing more, retries nothing more (a
     * request waiting for its retry fails for good), and finishes once the requests in flight are
     * answered. Call on the store's loop.
     */
    void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        cancelTimer();
        for (Slot slot : slots) {
            slot.stopRetrying();
        }
        finishIfIdle();
    }

    /**
     * The grace period after {@link #stop} is over: abandons the requests still in flight, counting
     * them in {@code unanswered} (a POST among them as maybe accepted: it was sent), and finishes.
     * Call on the store's loop.
     */
    void abandon(LongAdder unanswered) {
        stop();
        for (Slot slot : slots) {
            slot.abandon(unanswered);
        }
        finishIfIdle();
    }

    /** Called by the loop's sweep: fails the attempts in flight whose time is up. */
    void checkTimeout(long now) {
        for (Slot slot : slots) {
            slot.checkTimeout(now);
        }
    }

    /**
     * Starts what is due on the free connections, or sets the timer for the next intended send.
     *
     * @param slotFreed called because a request ended: a paced request already due now could not
     *                  start at its time, for want of a free connection
     */
    private void pump(boolean slotFreed) {
        boolean lateIfDue = slotFreed;
        while (!stopped && timer == null) {
            Slot slot = freeSlot();
            if (slot == null) {
                return;
            }
            long now = System.nanoTime();
            Next next = next(now);
            if (next == Next.NOTHING) {
                break;
            }
            if (next == Next.WAIT_FOR_LATE_RESEND) {
                timer = loop.schedule(this::onTimer, late.nanosUntilDue(now), TimeUnit.NANOSECONDS);
                return;
            }
            long intended = now;
            if (paceNanos != 0) {
                long wait = nextSendNanos - now;
                if (wait > 0) {
                    timer = loop.schedule(this::onTimer, wait, TimeUnit.NANOSECONDS);
                    return;
                }
                // Open model: the latency clock starts at the intended send time, even when late.
                intended = nextSendNanos;
                nextSendNanos += paceNanos;
                metrics.recordPacedStart(lateIfDue ? now - intended : -1);
            }
            lateIfDue = false;
            dispatch(next, slot, intended);
        }
        finishIfIdle();
    }

    private void onTimer() {
        timer = null;
        pump(false);
    }

    /** Picks the next request: a due late re-send, then GETs due after the POSTs started, then a POST. */
    private Next next(long now) {
        if (late != null && late.due(now)) {
            return Next.LATE_RESEND;
        }
        boolean open = !timed || (paceNanos == 0 ? now - closesAtNanos < 0 : nextSendNanos - closesAtNanos < 0);
        if (open && getsStarted < settings.getsAfter(postsStarted, getOffset)) {
            return Next.GET;
        }
        if ((open && (timed || postsStarted < posts)) || (late != null && late.wantsMorePurchases())) {
            return Next.POST;
        }
        if (late != null && late.nanosUntilDue(now) >= 0) {
            return Next.WAIT_FOR_LATE_RESEND;
        }
        return Next.NOTHING;
    }

    private void dispatch(Next next, Slot slot, long intended) {
        switch (next) {
            case LATE_RESEND -> {
                late.sending();
                slot.key.setLength(0);
                slot.key.append(late.key());
                slot.begin(RequestType.POST, late.path(), late.body(), intended, true);
            }
            case GET -> {
                boolean ownStore = getsStarted++ % 2 == 0;
                slot.begin(ownStore ? RequestType.GET_STORE : RequestType.GET_TOP10,
                        ownStore ? requests.storeItemsPath(store) : requests.topStoresPath(), null, intended, false);
            }
            default -> {
                postsStarted++;
                slot.key.setLength(0);
                slot.key.append(keyPrefix).append(postsStarted);
                if (late != null) {
                    late.purchaseSent();
                }
                slot.begin(RequestType.POST, requests.purchasePath(store), requests.purchaseBody(), intended, false);
            }
        }
    }

    private Slot freeSlot() {
        for (Slot slot : slots) {
            if (!slot.busy) {
                return slot;
            }
        }
        return null;
    }

    /** Counts the store down once nothing is in flight and nothing more will start. */
    private void finishIfIdle() {
        if (finished || (!stopped && timer != null)) {
            return;
        }
        for (Slot slot : slots) {
            if (slot.busy) {
                return;
            }
        }
        finished = true;
        cancelTimer();
        done.countDown();
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** A POST was answered for good: advance the phase clock of a run of a set count. */
    private void postAnswered() {
        postsAnswered++;
        if (!timed) {
            // Failed POSTs count as sent: the till did send them.
            if (postsAnswered == Phase.CENTRAL_TRIGGER_HOURS * purchasesPerHour) {
                centralGate.open();
            }
            if (postsAnswered == Phase.WEST_TRIGGER_HOURS * purchasesPerHour) {
                westGate.open();
            }
        }
    }

    /** One connection of the store and the request in flight on it. Confined to the store's loop. */
    private final class Slot implements HttpConnection.Listener {

        private final HttpConnection connection;
        private final StringBuilder key = new StringBuilder(40);
        private boolean busy;
        private boolean lateResend;
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
        // The retry waiting for its backoff, or null.
        private ScheduledFuture<?> backoff;

        Slot(HttpConnection connection) {
            this.connection = connection;
        }

        void begin(RequestType requestType, String requestPath, CharSequence requestBody, long startNanos,
                boolean isLateResend) {
            busy = true;
            type = requestType;
            path = requestPath;
            body = requestBody;
            lateResend = isLateResend;
            attempt = 0;
            promisedNothing = false;
            requestStartNanos = startNanos;
            if (!isLateResend) {
                metrics.recordStart();
            }
            send();
        }

        private void send() {
            backoff = null;
            if (++attempt > 1) {
                failures.retried();
            }
            attemptStartNanos = attempt == 1 ? requestStartNanos : System.nanoTime();
            deadlineNanos = System.nanoTime() + timeoutNanos;
            connection.send(type == RequestType.POST ? "POST" : "GET", path, body,
                    type == RequestType.POST ? key : null, type == RequestType.GET_TOP10, this);
        }

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
                if (lateResend) {
                    late.answered(true);
                } else {
                    metrics.recordSuccess(type, (now - requestStartNanos) / 1000);
                    if (late != null && type == RequestType.POST) {
                        late.accepted(key, path, body, now);
                    }
                }
                over();
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
            if (attempt == 1 && !lateResend) {
                failures.firstTryFailed();
            }
            if (retryable && attempt <= retry.retries() && run.retrying() && !stopped) {
                backoff = loop.schedule(this::send, retry.delayNanos(attempt, retryAfter, jitter), TimeUnit.NANOSECONDS);
                return;
            }
            giveUp();
            // Through the loop's queue: a failure can be reported while the request is being sent.
            loop.execute(this::over);
        }

        private void giveUp() {
            if (lateResend) {
                late.answered(false);
                return;
            }
            failures.gaveUp(type);
            if (type == RequestType.POST) {
                failures.purchaseFailed(promisedNothing);
            }
        }

        /** A stop: a request waiting for its retry fails for good now. */
        void stopRetrying() {
            if (backoff != null) {
                backoff.cancel(false);
                backoff = null;
                giveUp();
                over();
            }
        }

        void abandon(LongAdder unanswered) {
            if (deadlineNanos != 0) {
                connection.abandon();
                deadlineNanos = 0;
                unanswered.increment();
                if (type == RequestType.POST && !lateResend) {
                    failures.purchaseFailed(true);
                }
            }
            busy = false;
        }

        /** The request is over for good (answered, or given up): count it, free the connection, go on. */
        private void over() {
            if (!busy) {
                return; // abandoned at a stop meanwhile
            }
            busy = false;
            if (!lateResend) {
                completed.increment();
                if (type == RequestType.POST) {
                    postAnswered();
                }
            }
            pump(true);
        }
    }
}
