package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.LoadClient;
import com.supermarket.loadclient.stub.StubServer;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * {@code verify} end to end: a real {@code run} against the load client's stub writes the result
 * (2 stores x 18 purchases, every one accepted), and fake services answer purchases-service's
 * count endpoint and both services' Prometheus scrapes, draining step by step.
 */
class VerifyCommandTest {

    private static final int ACCEPTED = 2 * 9 * 2;

    @TempDir
    static Path dir;

    static Path result;

    @BeforeAll
    static void runAgainstTheStub() throws Exception {
        result = dir.resolve("run.json");
        try (StubServer stub = StubServer.start("127.0.0.1", 0, 1)) {
            int status = LoadClient.execute("run", "--base-url", "http://127.0.0.1:" + stub.port(), "--max-stores", "2",
                    "--purchases-per-hour", "2", "--no-client-warm-up", "--progress", "off", "--out", result.toString());
            assertThat(status).isZero();
        }
    }

    @Test
    void passesOnceThePipelineHasDrainedEveryAcceptedPurchaseOnceSinceTheBaseline() throws Exception {
        try (FakeServices services = new FakeServices(500, 7)) {
            Path baseline = dir.resolve("baseline.json");
            assertThat(verify(services, "--save-baseline", baseline.toString()).status()).isZero();
            // Purchases of this run reach the services 10 per poll: verify must wait for all of them.
            services.drainTo(500 + ACCEPTED, 7 + ACCEPTED, 10);

            CommandOutcome outcome = verify(services, "--baseline", baseline.toString(), result.toString());

            assertThat(outcome.status()).isZero();
            assertThat(outcome.out()).isEqualTo(ACCEPTED + " accepted, 0 maybe-accepted, " + ACCEPTED + " stored, " + ACCEPTED
                    + " counted: 0 lost, 0 duplicated\n");
        }
    }

    @Test
    void failsWithTheDuplicatesWhenStoreServiceCountsPurchasesAgain() throws Exception {
        try (FakeServices services = new FakeServices(0, 0)) {
            services.drainTo(ACCEPTED, ACCEPTED + 2, 10);
            Path counts = dir.resolve("counts.txt");

            CommandOutcome outcome = verify(services, "--counts-out", counts.toString(), result.toString());

            assertThat(outcome.status()).isEqualTo(1);
            assertThat(outcome.out()).endsWith(": 0 lost, 2 duplicated\n");
            assertThat(Files.readString(counts)).isEqualTo(ACCEPTED + " 0 " + ACCEPTED + " " + (ACCEPTED + 2) + " 0 2\n");
        }
    }

    @Test
    void failsWithTheLostPurchasesOnceNothingMovesForTheIdleTimeout() throws Exception {
        try (FakeServices services = new FakeServices(0, 0)) {
            services.drainTo(ACCEPTED - 3, ACCEPTED - 3, 100);

            CommandOutcome outcome = verify(services, result.toString());

            assertThat(outcome.status()).isEqualTo(1);
            assertThat(outcome.out()).endsWith(": 6 lost, 0 duplicated\n");
            assertThat(outcome.err()).contains("without progress");
        }
    }

    @Test
    void everyCopyGroupMustCountEveryPurchaseOnceAndTheCopiesMustAgree() throws Exception {
        try (FakeServices services = new FakeServices(0, 0)) {
            services.drainTo(ACCEPTED, ACCEPTED, ACCEPTED);
            String summary = "{\"partition\":0,\"copy\":%d,\"purchases\":%d,\"quantity\":%d,\"digest\":\"%s\"}";
            services.fixed("/c0/state/summary", summary.formatted(0, ACCEPTED, 99, "00000000000000aa"));
            services.fixed("/c1/state/summary", summary.formatted(1, ACCEPTED, 99, "00000000000000aa"));
            services.fixed("/c1-behind/store-metrics", "store_purchases_counted " + (ACCEPTED - 1) + ".0\n");
            services.fixed("/c1-behind/state/summary", summary.formatted(1, ACCEPTED - 1, 97, "00000000000000bb"));

            CommandOutcome agreeing = verify(services, "--store-metrics-url", services.url("/store-metrics"), "--store-copies", "2",
                    "--store-state-url", services.url("/c0"), "--store-state-url", services.url("/c1"), result.toString());
            assertThat(agreeing.status()).as(agreeing.out() + agreeing.err()).isZero();
            assertThat(agreeing.out()).contains("copy 0: " + ACCEPTED + " accepted", "copy 1: " + ACCEPTED + " accepted",
                    "partition 0: 2 copies agree: purchases " + ACCEPTED + ", quantity 99, digest 00000000000000aa");

            Path counts = dir.resolve("copies-counts.txt");
            CommandOutcome behind = verify(services, "--store-metrics-url", services.url("/c1-behind/store-metrics"),
                    "--store-copies", "2", "--store-state-url", services.url("/c0"), "--store-state-url",
                    services.url("/c1-behind"), "--counts-out", counts.toString(), result.toString());
            assertThat(behind.status()).isEqualTo(1);
            assertThat(behind.out()).contains("copy 1: " + ACCEPTED + " accepted, 0 maybe-accepted, " + ACCEPTED + " stored, "
                    + (ACCEPTED - 1) + " counted: 1 lost, 0 duplicated", "partition 0: 2 copies DIFFER");
            assertThat(Files.readString(counts)).endsWith(" 1 0\n");
        }
    }

    @Test
    void copyGroupsMustBeWholeSetsOfPartitions() throws Exception {
        try (FakeServices services = new FakeServices(0, 0)) {
            CommandOutcome outcome = verify(services, "--store-copies", "2", result.toString());

            assertThat(outcome.status()).isEqualTo(2);
            assertThat(outcome.err()).contains("--store-copies must divide the --store-metrics-url list");
        }
    }

    @Test
    void cannotVerifyWithoutTheServicesCounts() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        String nowhere = "http://127.0.0.1:" + closedPort;

        CommandOutcome outcome = CommandOutcome.run("verify", "--purchases-url", nowhere, "--purchases-metrics-url", nowhere,
                "--store-metrics-url", nowhere, "--idle-timeout", "0.2", "--poll-interval", "0.05", result.toString());

        assertThat(outcome.status()).isEqualTo(2);
        assertThat(outcome.err()).contains("could not read purchases-service's count");
    }

    @Test
    void helpStatesTheRule() {
        CommandOutcome outcome = CommandOutcome.run("verify", "--help");

        assertThat(outcome.out()).contains("N accepted, M maybe-accepted, S stored, C counted: L lost, D duplicated",
                "lost       = (A - S)+ + (E - C)+", "duplicated = (S - (A + M))+ + (C - E)+", "Idempotency-Key");
    }

    private static CommandOutcome verify(FakeServices services, String... args) {
        List<String> all = new ArrayList<>(List.of("verify", "--purchases-url", services.url(""),
                "--purchases-metrics-url", services.url("/purchases-metrics"), "--store-metrics-url",
                services.url("/store-metrics"), "--idle-timeout", "0.5", "--poll-interval", "0.05"));
        all.addAll(List.of(args));
        return CommandOutcome.run(all.toArray(String[]::new));
    }

    /**
     * purchases-service ({@code /purchases/count}, {@code /purchases-metrics}) and store-service
     * ({@code /store-metrics}) on one port. Each scrape of store-service moves both services a step
     * towards their targets, as consumers draining their queues do.
     */
    private static final class FakeServices implements AutoCloseable {

        private final HttpServer server;
        private final long storedAtStart;
        private long stored;
        private long counted;
        private long storedTarget;
        private long countedTarget;
        private long step;

        FakeServices(long stored, long counted) throws IOException {
            this.storedAtStart = stored;
            this.stored = stored;
            this.counted = counted;
            this.storedTarget = stored;
            this.countedTarget = counted;
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
            server.setExecutor(Executors.newSingleThreadExecutor());
            server.createContext("/purchases/count", exchange -> answer(exchange, "{\"count\":" + stored() + "}"));
            server.createContext("/purchases-metrics", exchange -> answer(exchange,
                    "# TYPE purchases_stored_total counter\npurchases_stored_total{application=\"purchases-service\"} "
                            + (stored() - storedAtStart) + ".0\n"));
            server.createContext("/store-metrics", exchange -> answer(exchange,
                    "# TYPE store_purchases_counted gauge\nstore_purchases_counted{application=\"store-service\"} "
                            + scrapeCounted() + ".0\n"));
            server.start();
        }

        synchronized void drainTo(long storedTarget, long countedTarget, long step) {
            this.storedTarget = storedTarget;
            this.countedTarget = countedTarget;
            this.step = step;
        }

        private synchronized long stored() {
            return stored;
        }

        private synchronized long scrapeCounted() {
            stored = Math.min(storedTarget, stored + step);
            counted = Math.min(countedTarget, counted + step);
            return counted;
        }

        /** Answers {@code path} with {@code body}, always. */
        void fixed(String path, String body) {
            server.createContext(path, exchange -> answer(exchange, body));
        }

        String url(String path) {
            return "http://127.0.0.1:" + server.getAddress().getPort() + path;
        }

        private static void answer(HttpExchange exchange, String body) throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
