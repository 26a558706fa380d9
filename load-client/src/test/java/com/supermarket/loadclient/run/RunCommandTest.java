package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;

class RunCommandTest {

    @Test
    void helpShowsTheStandardProfileDefaults() {
        String usage = new CommandLine(new RunCommand()).getUsageMessage();

        assertThat(usage).contains("http://localhost:8080", "Default: 1000", "Default: 100000", "Default: 300",
                "Default: 5", "Default: 20210101", "--label", "--csv", "--out", "--rate", "--get-ratio", "--retries",
                "Default: " + RunCommand.RETRIES_RIDING_OUT_A_RESTART, "Retry-After", "--io-threads", "--watch-pid",
                "--duration", "--threshold", "--hlog", "--environment", "--max-in-flight-per-store", "Default: 1",
                "one record per attempt", "99 a --threshold was crossed", "130 stopped by SIGINT",
                "never dropped");
        assertThat(usage).doesNotContain("virtual thread", "one record per request");
    }

    @Test
    void refusesADurationThatIsNotATimeAndAQueryThresholdWithoutQueries() {
        StringWriter duration = new StringWriter();
        int status = new CommandLine(new RunCommand()).setErr(new PrintWriter(duration)).execute("--duration", "2 weeks");
        assertThat(status).isEqualTo(2);
        assertThat(duration.toString()).contains("--duration must be a positive time (500ms, 90s, 2m, 1h): 2 weeks");

        StringWriter zero = new StringWriter();
        status = new CommandLine(new RunCommand()).setErr(new PrintWriter(zero)).execute("--duration", "0s");
        assertThat(status).isEqualTo(2);

        StringWriter gets = new StringWriter();
        status = new CommandLine(new RunCommand()).setErr(new PrintWriter(gets))
                .execute("--threshold", "GET_STORE.p99<10ms");
        assertThat(status).isEqualTo(2);
        assertThat(gets.toString()).contains("the run sends no GET_STORE requests (--get-ratio is 0)");

        StringWriter inFlight = new StringWriter();
        status = new CommandLine(new RunCommand()).setErr(new PrintWriter(inFlight))
                .execute("--max-in-flight-per-store", "0");
        assertThat(status).isEqualTo(2);
        assertThat(inFlight.toString()).contains("--max-in-flight-per-store must be at least 1");
    }

    @Test
    void warmsUpAgainstAStubOfItsOwnSoTheServerSeesOnlyTheProfile() throws Exception {
        try (StubApi api = new StubApi(request -> request.method().equals("POST") ? 201 : 200)) {
            StringWriter err = new StringWriter();
            PrintStream stderr = System.err;
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            int status;
            try {
                status = new CommandLine(new RunCommand()).setErr(new PrintWriter(err)).execute("--base-url",
                        api.baseUrl().toString(), "--max-stores", "2", "--purchases-per-hour", "2", "--get-ratio", "0.5",
                        "--progress", "OFF");
            } finally {
                System.setErr(stderr);
            }

            assertThat(status).isZero();
            assertThat(api.requests()).as("2 stores x 9 hours x 2 POSTs, and a GET per two").hasSize(2 * 18 + 2 * 9);
            assertThat(captured.toString(StandardCharsets.UTF_8))
                    .contains("warmed up against a stub of its own: " + String.format(Locale.ROOT, "%,d", 2 * (9 * RunSettings.WARM_UP_PER_HOUR + 9 * RunSettings.WARM_UP_PER_HOUR / 2)));
        }
    }

    @Test
    void rejectsItemsPerPurchaseOutsideOneToTwenty() {
        StringWriter err = new StringWriter();
        CommandLine commandLine = new CommandLine(new RunCommand()).setErr(new PrintWriter(err));

        int status = commandLine.execute("--items-per-purchase", "21");

        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).contains("--items-per-purchase must be 1..20");
    }

    @Test
    void rejectsADateThatIsNotOnTheCalendar() {
        StringWriter err = new StringWriter();
        CommandLine commandLine = new CommandLine(new RunCommand()).setErr(new PrintWriter(err));

        int status = commandLine.execute("--date", "20210230");

        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).contains("--date must be a real yyyyMMdd date");
    }

    @Test
    void refusesATillKeysFileThatLacksAStoreOrTheManagerKeyTheQueriesNeed(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws java.io.IOException {
        java.nio.file.Path keys = dir.resolve("till-keys.txt");
        java.nio.file.Files.writeString(keys, "1 tk_one till-1\n2 tk_two till-1\n");

        StringWriter missingStore = new StringWriter();
        int status = new CommandLine(new RunCommand()).setErr(new PrintWriter(missingStore))
                .execute("--max-stores", "3", "--till-keys", keys.toString());
        assertThat(status).isEqualTo(2);
        assertThat(missingStore.toString()).contains("--till-keys: no key of store 3");

        StringWriter noManager = new StringWriter();
        status = new CommandLine(new RunCommand()).setErr(new PrintWriter(noManager))
                .execute("--max-stores", "2", "--get-ratio", "0.1", "--till-keys", keys.toString());
        assertThat(status).isEqualTo(2);
        assertThat(noManager.toString()).contains("needs a manager key");
    }
}
