package com.supermarket.loadclient.report;

import static com.supermarket.loadclient.report.ReportCommandTest.result;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.LoadClient;
import com.supermarket.loadclient.result.ResultFiles;
import com.supermarket.loadclient.result.RunEnvironment;
import com.supermarket.loadclient.result.RunResult;

/**
 * Opens {@code report.html} in headless Chromium (Debian's {@code chromium}; {@code scripts/test.sh}
 * installs it) and reads the DOM after the page's scripts ran: every chart decoded with its size,
 * every table with its rows. Fails, never skips, without Chromium.
 */
class HtmlReportChromiumTest {

    @TempDir
    Path dir;

    @Test
    void chromiumRendersEveryChartAndTableOfTheReport() throws Exception {
        Path small = dir.resolve("small.json");
        Path large = dir.resolve("large.json");
        Path base = dir.resolve("base.json");
        ResultFiles.write(withEnvironment(result("t2.micro", 32, 1_200, 95.5)), small);
        ResultFiles.write(result("t2.xlarge", 64, 4_800, 35.25), large);
        ResultFiles.write(result("t2.micro", 32, 1_000, 100), base);
        Path shards = dir.resolve("shards.md");
        Files.writeString(shards, "## Messages per shard queue\n\n### t2.micro-32\n\n```\nexchange  q0  q1\n<balance> 1.02\n```\n");
        Path out = dir.resolve("report");

        int status = LoadClient.execute("report", small.toString(), large.toString(), "--baseline", base.toString(),
                "--tolerance", "1000%", "--append", shards.toString(), "--out-dir", out.toString());

        assertThat(status).isZero();
        Path html = out.resolve("report.html");
        assertThat(Files.readString(html)).as("nothing fetched from elsewhere").doesNotContainPattern("(src|href)=\"(?!data:)")
                .doesNotContain("url(").doesNotContain("@import");
        String dom = dumpDom(html);
        // Four charts: throughput and p99 against stores, a timeline per run; all XChart's 900 x 540.
        assertThat(attribute(dom, "data-charts")).isEqualTo("4");
        assertThat(attribute(dom, "data-charts-rendered")).isEqualTo("4");
        assertThat(attribute(dom, "data-chart-sizes")).isEqualTo("900x540 900x540 900x540 900x540");
        // Results, CPU, full load, distribution (POST only), environment: a row per run; against the
        // baseline: 8 metrics (7 and purchase-api's CPU) per run.
        assertThat(attribute(dom, "data-table-rows")).isEqualTo("2,2,2,2,2,16");
        assertThat(dom).contains("<td>t2.micro</td>").contains("<td>t2.xlarge</td>")
                .contains("<td>0123456789ab (dirty)</td>").contains("<td>API_PUBLISH_BATCH_MAX_IN_FLIGHT=4</td>")
                .contains("<td>run --stores 32 --out a\\|b.json</td>".replace("\\|", "|"))
                .contains("<h2>Against the baseline base.json, tolerance 1000%</h2>")
                .contains("<h3>t2.micro-32</h3>\n<pre>exchange  q0  q1\n&lt;balance&gt; 1.02\n</pre>");
    }

    private static RunResult withEnvironment(RunResult run) {
        RunEnvironment environment = new RunEnvironment("0.1.0", "0123456789abcdef", true, "bench-1", "Linux 6.1 amd64",
                "AMD EPYC", 2, 24L << 30, "OpenJDK 64-Bit Server VM 21", List.of("-Xmx1g"), 0.5, 1.75,
                List.of("run", "--stores", "32", "--out", "a|b.json"), Map.of("stores", "32"),
                Map.of("API_PUBLISH_BATCH_MAX_IN_FLIGHT", "4"));
        return run.withVerdict(List.of(), environment, null);
    }

    /** The page's DOM once loaded and its scripts ran, as headless Chromium prints it. */
    private String dumpDom(Path html) throws Exception {
        Path chromium = Stream.of(System.getenv("PATH").split(File.pathSeparator))
                .flatMap(folder -> Stream.of(Path.of(folder, "chromium"), Path.of(folder, "chromium-browser")))
                .filter(Files::isExecutable).findFirst().orElse(null);
        assertThat(chromium).as("headless Chromium on the PATH (Debian: apt-get install -y chromium; "
                + "scripts/test.sh installs it)").isNotNull();
        Path profile = Files.createDirectory(dir.resolve("chromium-profile"));
        Path stderr = dir.resolve("chromium.err");
        Process process = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + profile, "--dump-dom", html.toUri().toString())
                .redirectError(stderr.toFile()).start();
        String dom = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("chromium finished").isTrue();
        assertThat(process.exitValue()).as("chromium's exit status; stderr: %s", Files.readString(stderr)).isZero();
        return dom;
    }

    private static String attribute(String dom, String name) {
        Matcher matcher = Pattern.compile("id=\"render-status\"[^>]*\\s" + name + "=\"([^\"]*)\"").matcher(dom);
        assertThat(matcher.find()).as("%s on #render-status in %s", name, dom.substring(Math.max(0, dom.length() - 600)))
                .isTrue();
        return matcher.group(1);
    }
}
