package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.supermarket.loadclient.LoadClient;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunResult;
import com.supermarket.loadclient.stub.StubServer;

/**
 * The load client as a separate process, against the stub: what a script or CI sees, its exit
 * status and its files, and a signal from outside.
 */
class RunProcessTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = { "TERM", "INT" })
    void aSignalEndsTheRunWithItsSummaryEveryFileWrittenAndExitStatus130(String signal) throws Exception {
        try (StubServer stub = StubServer.start("127.0.0.1", 0, 1)) {
            Path json = dir.resolve("run.json");
            Path csv = dir.resolve("run.csv");
            Launched client = start("run", "--base-url", "http://127.0.0.1:" + stub.port(), "--max-stores", "8",
                    "--duration", "10m", "--rate", "2000", "--out", json.toString(), "--csv", csv.toString(),
                    "--progress", "off", "--no-client-warm-up");
            // Running once the CSV writer has written a first chunk of records.
            await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(csv) && Files.size(csv) > 10_000);

            new ProcessBuilder("kill", "-" + signal, Long.toString(client.process().pid())).inheritIO().start().waitFor();

            Finished stopped = client.finish(LoadRun.STOP_GRACE.toSeconds() + 20);
            String out = stopped.out();
            String err = stopped.err();
            assertThat(stopped.status()).as(out + err).isEqualTo(RunCommand.EXIT_INTERRUPTED);
            assertThat(err).contains("SIG" + signal + ": stopping");
            assertThat(out).contains("INTERRUPTED", "results      " + json, "hlog         " + dir.resolve("run.hlog"));

            RunResult result = ResultFiles.read(json);
            assertThat(result.interrupted()).isTrue();
            assertThat(result.successful()).isPositive();
            assertThat(result.wallTimeSeconds()).isLessThan(60);
            assertThat(result.histogramLog()).isEqualTo("run.hlog");
            assertThat(result.environment().commandLine()).contains("--duration", "10m");
            assertThat(result.environment().clientSettings()).containsEntry("--max-stores", "8");
            assertThat(Files.readAllLines(csv)).as("one record per answered attempt").hasSize(1 + (int) result.successful());
            long logged = 0;
            HistogramLogReader reader = new HistogramLogReader(dir.resolve("run.hlog").toFile());
            for (EncodableHistogram interval = reader.nextIntervalHistogram(); interval != null;
                    interval = reader.nextIntervalHistogram()) {
                if ("POST".equals(interval.getTag())) {
                    logged += ((org.HdrHistogram.Histogram) interval).getTotalCount();
                }
            }
            assertThat(logged).isEqualTo(result.postLatency().count());
        }
    }

    @Test
    void servesLiveMetricsThatGrowDuringTheRunAndPromtoolAccepts() throws Exception {
        try (StubServer stub = StubServer.start("127.0.0.1", 0, 1)) {
            int port = freePort();
            Launched client = start("run", "--base-url", "http://127.0.0.1:" + stub.port(), "--max-stores", "8",
                    "--duration", "10m", "--rate", "2000", "--all-stores-at-once", "--label", "live test",
                    "--metrics-port", Integer.toString(port), "--progress", "off", "--no-client-warm-up");
            URI metrics = URI.create("http://127.0.0.1:" + port + "/metrics");
            HttpClient http = HttpClient.newHttpClient();
            String posts = "loadclient_requests_total{outcome=\"success\",run=\"live test\",type=\"POST\"} ";
            String first = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                    .until(() -> scrape(http, metrics), scrape -> counter(scrape, posts) > 0);
            String later = await().atMost(Duration.ofSeconds(30))
                    .until(() -> scrape(http, metrics), scrape -> counter(scrape, posts) > counter(first, posts) + 1000);

            assertThat(later).contains("# TYPE loadclient_request_seconds histogram",
                    "loadclient_request_seconds_bucket{run=\"live test\",type=\"POST\",le=\"0.001\"}",
                    "loadclient_request_seconds_bucket{run=\"live test\",type=\"POST\",le=\"+Inf\"}",
                    "loadclient_requests_in_flight{run=\"live test\"}", "loadclient_late_starts_total{run=\"live test\"}");
            Path scraped = dir.resolve("metrics.txt");
            Files.writeString(scraped, later);
            Process promtool = new ProcessBuilder("promtool", "check", "metrics").redirectInput(scraped.toFile())
                    .redirectErrorStream(true).start();
            String checked = new String(promtool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(promtool.waitFor()).as("promtool check metrics: " + checked).isZero();

            new ProcessBuilder("kill", "-TERM", Long.toString(client.process().pid())).inheritIO().start().waitFor();
            Finished stopped = client.finish(LoadRun.STOP_GRACE.toSeconds() + 20);
            assertThat(stopped.status()).as(stopped.out() + stopped.err()).isEqualTo(RunCommand.EXIT_INTERRUPTED);
            assertThat(stopped.err()).contains("live metrics on http://0.0.0.0:" + port + "/metrics");
        }
    }

    private static String scrape(HttpClient http, URI uri) throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(200);
        return answer.body();
    }

    /** The value of the sample line starting with {@code series} (its name and labels, then a space). */
    private static double counter(String scrape, String series) {
        return scrape.lines().filter(line -> line.startsWith(series)).mapToDouble(line -> Double.parseDouble(
                line.substring(series.length()))).findFirst().orElseThrow(() -> new AssertionError("no " + series));
    }

    @Test
    void exitsZeroWhenEveryThresholdHoldsAnd99WhenOneIsCrossedSayingWhich() throws Exception {
        try (StubServer stub = StubServer.start("127.0.0.1", 0, 1)) {
            String url = "http://127.0.0.1:" + stub.port();
            Finished held = run("run", "--base-url", url, "-s", "2", "-p", "5", "--progress", "off", "--no-client-warm-up",
                    "--threshold", "failed<1%", "--threshold", "POST.p99<10s", "--threshold", "rps>1");
            assertThat(held.status()).as(held.out()).isEqualTo(RunCommand.EXIT_OK);
            assertThat(held.out()).contains("thresholds   3 of 3 held", "pass failed<1%", "pass POST.p99<10s");

            Path json = dir.resolve("crossed.json");
            Finished crossed = run("run", "--base-url", url, "-s", "2", "-p", "5", "--progress", "off",
                    "--no-client-warm-up", "--threshold", "failed<1%", "--threshold", "POST.p50<1us", "--out",
                    json.toString());
            assertThat(crossed.status()).as(crossed.out()).isEqualTo(RunCommand.EXIT_THRESHOLD_CROSSED);
            assertThat(crossed.out()).contains("thresholds   1 of 2 held", "FAIL POST.p50<1us");
            assertThat(ResultFiles.read(json).thresholds()).extracting(t -> t.threshold() + " " + t.passed())
                    .containsExactly("failed<1% true", "POST.p50<1us false");
        }
    }

    @Test
    void refusesAMalformedThresholdBeforeSendingAnything() throws Exception {
        Finished refused = run("run", "--base-url", "http://127.0.0.1:" + freePort(), "--threshold", "POST.p99<<5ms");

        assertThat(refused.status()).isEqualTo(2);
        assertThat(refused.err()).contains("--threshold 'POST.p99<<5ms': not METRIC OP VALUE");
    }

    @Test
    void exitsOneWhenNoRequestSucceeded() throws Exception {
        Finished down = run("run", "--base-url", "http://127.0.0.1:" + freePort(), "-s", "1", "-p", "1", "--progress",
                "off", "--no-client-warm-up", "--threshold", "failed<1%");

        assertThat(down.status()).as(down.out() + down.err()).isEqualTo(RunCommand.EXIT_FAILED);
        assertThat(down.out()).contains("successful   0");
    }

    private record Finished(int status, String out, String err) {
    }

    /** A client process and the files its stdout and stderr go to. */
    private record Launched(Process process, Path out, Path err) {

        Finished finish(long timeoutSeconds) throws Exception {
            assertThat(process.waitFor(timeoutSeconds, TimeUnit.SECONDS)).as("ended within %d s", timeoutSeconds).isTrue();
            return new Finished(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        }
    }

    private Finished run(String... args) throws Exception {
        return start(args).finish(120);
    }

    /**
     * Starts {@code load-client args} in a JVM of its own, its output to files. Through perl, which
     * sets SIGINT back to its default first: a process started in the background of a
     * non-interactive shell (as CI may start the build) inherits SIGINT ignored, and a JVM leaves
     * an ignored signal ignored.
     */
    private Launched start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("perl", "-e", "$SIG{INT} = 'DEFAULT'; exec @ARGV or die \"exec: $!\"",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                LoadClient.class.getName()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        return new Launched(new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start(),
                out, err);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
