package com.supermarket.store.durability;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.store.counts.CountsSummary;
import com.supermarket.store.counts.StoreCounts;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PeerRebuildTest {

    @TempDir
    Path dir;

    private final HttpServer peers = start();

    @AfterEach
    void stop() {
        peers.stop(0);
    }

    @Test
    void everyPeerEmptyIsAFirstInstallAndAnyOtherRefusalIsWaitedOut() throws IOException {
        refuse("/empty-a", PeerRebuild.EMPTY);
        refuse("/empty-b", PeerRebuild.EMPTY);
        refuse("/recovering", "recovering");
        StateDirectory state = new StateDirectory(dir);

        PeerRebuild.Round allEmpty = new PeerRebuild(List.of(url("/empty-a"), url("/empty-b")), Duration.ofSeconds(5)).into(state);
        assertThat(allEmpty.allEmpty()).isTrue();
        assertThat(allEmpty.rebuilt()).isFalse();

        PeerRebuild.Round waiting = new PeerRebuild(List.of(url("/empty-a"), url("/recovering"), "http://127.0.0.1:1"),
                Duration.ofSeconds(5)).into(state);
        assertThat(waiting.allEmpty()).isFalse();
        assertThat(waiting.rebuilt()).isFalse();
        assertThat(waiting.problem()).contains("/recovering/state/snapshot: 503", "127.0.0.1:1/state/snapshot");
        assertThat(state.hasState()).isFalse();
    }

    @Test
    void aPeerWithoutAnAnswerMayHoldCountsWhateverTheReasonAndTheRoundSaysWhichReason() throws IOException {
        // A first install: one copy says it is empty, the other has no pod yet (its name does not
        // resolve), or one whose server is not up. Neither can be told from a copy with counts that is
        // restarting, so none of them lets this copy start from zero.
        refuse("/empty", PeerRebuild.EMPTY);
        StateDirectory state = new StateDirectory(dir);

        PeerRebuild.Round unresolved = new PeerRebuild(List.of(url("/empty"), "http://store-service-c1-0.peers.invalid:8081"),
                Duration.ofSeconds(5)).into(state);
        PeerRebuild.Round refused = new PeerRebuild(List.of(url("/empty"), "http://127.0.0.1:1"), Duration.ofSeconds(5)).into(state);

        assertThat(List.of(unresolved, refused)).allSatisfy(round -> {
            assertThat(round.allEmpty()).as("never from zero while a copy may hold counts").isFalse();
            assertThat(round.rebuilt()).isFalse();
        });
        assertThat(unresolved.problem()).contains("store-service-c1-0.peers.invalid:8081/state/snapshot: its name does not "
                + "resolve: no pod of that copy has an address now");
        assertThat(refused.problem()).contains("127.0.0.1:1/state/snapshot: connection refused: its server is not up yet");
        assertThat(state.hasState()).isFalse();
    }

    @Test
    void theFirstPeerThatGivesItsCountsIsInstalledAsTheSnapshotRecoveryLoads() throws IOException {
        StoreCounts live = new StoreCounts(8, 10, 64);
        for (int i = 0; i < 50; i++) {
            live.apply(new Purchase(UUID.randomUUID(), 1 + i % 8, 1, LocalDate.EPOCH, List.of(new PurchaseItem(1 + i % 10, 2)),
                    Instant.EPOCH));
        }
        ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
        Snapshots.write(Channels.newChannel(snapshot), 0, live, () -> 0);
        refuse("/recovering", "recovering");
        peers.createContext("/live/state/snapshot", exchange -> {
            exchange.sendResponseHeaders(200, snapshot.size());
            exchange.getResponseBody().write(snapshot.toByteArray());
            exchange.close();
        });
        StateDirectory state = new StateDirectory(dir);

        PeerRebuild.Round round = new PeerRebuild(List.of(url("/recovering"), url("/live/")), Duration.ofSeconds(5)).into(state);

        assertThat(round.rebuilt()).isTrue();
        assertThat(round.source()).isEqualTo(url("/live/"));
        assertThat(state.hasState()).isTrue();
        assertThat(state.snapshotInProgress(0)).doesNotExist();
        StoreCounts rebuilt = new StoreCounts(8, 10, 64);
        Recovery.recover(state, rebuilt);
        assertThat(CountsSummary.of(rebuilt)).isEqualTo(CountsSummary.of(live));
    }

    @Test
    void thePartitionOfThePeersIsThisInstances() {
        RebuildProperties properties = new RebuildProperties(List.of(" http://store-c1-{partition}.h:8081 ", ""),
                Duration.ofSeconds(1));

        assertThat(properties.peersOf(3)).containsExactly("http://store-c1-3.h:8081");
    }

    private void refuse(String path, String state) {
        peers.createContext(path + "/state/snapshot", exchange -> {
            byte[] body = ("{\"state\":\"" + state + "\"}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add(PeerRebuild.STATE_HEADER, state);
            exchange.sendResponseHeaders(503, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
    }

    private String url(String path) {
        return "http://127.0.0.1:" + peers.getAddress().getPort() + path;
    }

    private static HttpServer start() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
            server.start();
            return server;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
