package com.supermarket.tools.compare;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class PipelineSamplerCommandTest {

    /** A stand-in for the services' scrapes: every metric the sampler reads, at 5. */
    private final HttpServer services = services();

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        services.stop(0);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void whileTheLoadRunsNoRowIsTakenAndTheRowAfterItComesWhenItEnds() throws Exception {
        // Rows every 50 ms, and every 10 minutes while a load (found by its command line) runs. The
        // pattern allows a path before the name, for a sleep that a wrapper runs by its full path.
        String loadPattern = "(^|/)sleep 4$";
        Path csv = dir.resolve("pipeline.csv");
        String url = "http://127.0.0.1:" + services.getAddress().getPort() + "/actuator/prometheus";
        Thread sampler = new Thread(() -> new CommandLine(new PipelineSamplerCommand()).execute("--out", csv.toString(),
                "--every", "50", "--every-loaded", "600000", "--load", loadPattern,
                "--api-metrics", url, "--purchases-metrics", url, "--store-metrics", url));
        sampler.start();
        try {
            while (rows(csv).size() < 3) {
                Thread.sleep(50);
            }
            long started = System.currentTimeMillis();
            Process load = new ProcessBuilder("sleep", "4").start();
            assertThat(commandLineOf(load)).as("the load's command line, as the sampler reads it from /proc")
                    .containsPattern(loadPattern);
            try (Stream<Path> listing = Files.list(Path.of("/proc"))) {
                assertThat(listing.map(entry -> entry.getFileName().toString()))
                        .as("the /proc listing, as the sampler lists it").contains(Long.toString(load.pid()));
            }
            assertThat(load.waitFor(60, TimeUnit.SECONDS)).isTrue();
            long ended = System.currentTimeMillis();
            assertThat(load.exitValue()).as("the load's exit status").isZero();
            assertThat(ended - started).as("how long the load ran, ms").isGreaterThan(3_500);
            while (rows(csv).stream().filter(time -> time > ended).count() < 3) {
                Thread.sleep(50);
            }
            List<Long> times = rows(csv).stream().filter(time -> time >= started).toList();
            // Once a row had found the load running, none until it ended (4 s, less the time to find
            // it); the next came when it ended, not 10 minutes later, and every 50 ms again after.
            int gap = 0;
            for (int i = 1; i < times.size(); i++) {
                if (times.get(i) - times.get(i - 1) > times.get(gap + 1) - times.get(gap)) {
                    gap = i - 1;
                }
            }
            assertThat(times.get(gap + 1) - times.get(gap))
                    .as("the longest gap between rows (ms); the rows since the load started: %s", times).isGreaterThan(2_500);
            assertThat(times.get(gap + 1)).isLessThan(ended + 1_000);
            assertThat(times.get(gap + 3) - times.get(gap + 1)).isLessThan(1_000);
            assertThat(Files.readAllLines(csv).get(1)).endsWith(",5,5,5");
        } finally {
            sampler.interrupt();
            sampler.join(5_000);
        }
    }

    /** The process's command line once it has replaced the JVM's spawn helper (within 2 s); empty if unreadable. */
    private static String commandLineOf(Process process) throws InterruptedException {
        Path cmdline = Path.of("/proc", Long.toString(process.pid()), "cmdline");
        String line = "";
        for (int i = 0; i < 100 && !line.contains("sleep"); i++) {
            try {
                line = new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8).replace('\0', ' ').strip();
            } catch (IOException unreadable) {
                line = "";
            }
            Thread.sleep(20);
        }
        return line;
    }

    /** The rows' times so far. */
    private static List<Long> rows(Path csv) throws IOException {
        if (!Files.exists(csv)) {
            return List.of();
        }
        return Files.readAllLines(csv).stream().skip(1).filter(line -> !line.isBlank())
                .map(line -> Long.parseLong(line.split(",")[0])).toList();
    }

    private static HttpServer services() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            byte[] body = """
                    purchases_stored_total 5.0
                    store_purchases_counted 5.0
                    api_purchases_batch_size_purchases_count 5.0
                    """.getBytes(StandardCharsets.UTF_8);
            server.createContext("/", exchange -> {
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
