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
        // Rows every 50 ms, and every 10 minutes while a load (found by its command line) runs.
        Path csv = dir.resolve("pipeline.csv");
        String url = "http://127.0.0.1:" + services.getAddress().getPort() + "/actuator/prometheus";
        Thread sampler = new Thread(() -> new CommandLine(new PipelineSamplerCommand()).execute("--out", csv.toString(),
                "--every", "50", "--every-loaded", "600000", "--load", "^sleep 3\\.5$",
                "--api-metrics", url, "--purchases-metrics", url, "--store-metrics", url));
        sampler.start();
        try {
            while (rows(csv).size() < 3) {
                Thread.sleep(50);
            }
            long started = System.currentTimeMillis();
            Process load = new ProcessBuilder("sleep", "3.5").start();
            assertThat(load.waitFor(60, TimeUnit.SECONDS)).isTrue();
            long ended = System.currentTimeMillis();
            while (rows(csv).stream().filter(time -> time > ended).count() < 3) {
                Thread.sleep(50);
            }
            List<Long> times = rows(csv).stream().filter(time -> time >= started).toList();
            // Once a row had found the load running, none until it ended (3.5 s, less the time to find
            // it); the next came when it ended, not 10 minutes later, and every 50 ms again after.
            int gap = 0;
            for (int i = 1; i < times.size(); i++) {
                if (times.get(i) - times.get(i - 1) > times.get(gap + 1) - times.get(gap)) {
                    gap = i - 1;
                }
            }
            assertThat(times.get(gap + 1) - times.get(gap)).isGreaterThan(2_500);
            assertThat(times.get(gap + 1)).isLessThan(ended + 1_000);
            assertThat(times.get(gap + 3) - times.get(gap + 1)).isLessThan(1_000);
            assertThat(Files.readAllLines(csv).get(1)).endsWith(",5,5,5");
        } finally {
            sampler.interrupt();
            sampler.join(5_000);
        }
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
