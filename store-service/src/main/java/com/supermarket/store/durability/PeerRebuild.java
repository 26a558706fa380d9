package com.supermarket.store.durability;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Rebuilds a copy's lost state directory from a live copy of its partition: asks each peer in
 * turn for {@code GET /state/snapshot} ({@link StateController}) and writes the first complete
 * answer into the directory as snapshot 0, which the normal {@link Recovery} then loads; the
 * copy's own shard queues hold everything since it went down, and the dedup window carried in
 * the snapshot skips what both hold.
 *
 * <p>When a copy may start from zero: only when every peer has answered, itself, that it is empty
 * and never had state ({@value #EMPTY}). That is the one way to know that no copy of the partition
 * holds counts, which on a first install every copy does at once. A peer that gives no answer
 * may hold counts, whatever the reason: a name that does not resolve is a copy with no pod at the
 * moment (restarting, rescheduled, Pending on a lost zone with its volume), which cannot be told
 * from one that never existed; a refused connection is a copy whose server is starting; a silent
 * one is slow. Starting from zero beside such a copy would serve stale counts until the end of
 * time, so each is waited for, and the copies are deployed so that every copy with a pod answers
 * before it is ready (the chart's headless Service publishes unready pods and starts every pod at
 * once, so on a first install the copies find each other). {@link Round#problem()} names each
 * peer's reason, for readiness and the log.
 *
 * <p>The answer goes into a temp file, put in place by {@link StateDirectory#installFirstSnapshot}: a
 * crash before that leaves no state, so the next start rebuilds again.
 *
 * <p>Not thread-safe: one caller, the recovery thread.
 */
final class PeerRebuild {

    /** The header a store-service sets on a 503 from {@code /state/*}: why it has no state to give. */
    static final String STATE_HEADER = "X-Store-State";

    /** The {@link #STATE_HEADER} of a copy that has no state and never had any on its disk. */
    static final String EMPTY = "empty";

    /**
     * What one round over the peers did.
     *
     * @param rebuilt  a snapshot from {@code source} is in place
     * @param allEmpty every peer answered that it is empty and never had state (first install):
     *                 start from zero
     * @param source   the peer the snapshot came from, or null
     * @param problem  why neither, for readiness and the log, or null
     */
    record Round(boolean rebuilt, boolean allEmpty, String source, String problem) {
    }

    private final List<String> peers;
    private final Duration timeout;
    private final HttpClient http;

    PeerRebuild(List<String> peers, Duration timeout) {
        if (peers.isEmpty()) {
            throw new IllegalArgumentException("no peer to rebuild from");
        }
        this.peers = List.copyOf(peers);
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    List<String> peers() {
        return peers;
    }

    /** Asks every peer in turn until one gives a snapshot, which it writes into {@code directory}. */
    Round into(StateDirectory directory) throws IOException {
        directory.prepare();
        List<String> problems = new ArrayList<>();
        int empty = 0;
        for (String peer : peers) {
            URI uri = URI.create(peer.replaceAll("/+$", "") + "/state/snapshot");
            Path temp = directory.snapshotInProgress(0);
            HttpResponse<String> response;
            try {
                response = http.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(), info -> info.statusCode() == 200
                        ? HttpResponse.BodySubscribers.mapping(HttpResponse.BodySubscribers.ofFile(temp,
                                StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE),
                        Path::toString)
                        : HttpResponse.BodySubscribers.ofString(java.nio.charset.StandardCharsets.UTF_8));
            } catch (IOException e) {
                Files.deleteIfExists(temp);
                problems.add(uri + ": " + unanswered(e));
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while asking " + uri, e);
            }
            if (response.statusCode() == 200) {
                directory.installFirstSnapshot(temp);
                return new Round(true, false, peer, null);
            }
            String state = response.headers().firstValue(STATE_HEADER).orElse("");
            if (response.statusCode() == 503 && state.equals(EMPTY)) {
                empty++;
            }
            problems.add(uri + ": " + response.statusCode() + " " + response.body().strip());
        }
        if (empty == peers.size()) {
            return new Round(false, true, null, null);
        }
        return new Round(false, false, null, "no live copy of this partition gave its counts yet (never starting from "
                + "zero while one may hold them): " + String.join("; ", problems));
    }

    /** Why a peer gave no answer, in words an operator can act on; each may hold counts. */
    private String unanswered(IOException e) {
        List<Throwable> causes = new ArrayList<>();
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            causes.add(cause);
        }
        if (causes.stream().anyMatch(c -> c instanceof UnresolvedAddressException || c instanceof UnknownHostException)) {
            return "its name does not resolve: no pod of that copy has an address now (starting, moved, or Pending), "
                    + "and it may hold counts";
        }
        if (causes.stream().anyMatch(HttpTimeoutException.class::isInstance)) {
            return "no answer within " + timeout + ": it may hold counts";
        }
        if (causes.stream().anyMatch(ConnectException.class::isInstance)) {
            return "connection refused: its server is not up yet, and it may hold counts";
        }
        return e.toString();
    }
}
