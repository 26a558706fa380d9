package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;

class RunCommandTest {

    @Test
    void helpShowsTheStandardProfileDefaults() {
        String usage = new CommandLine(new RunCommand()).getUsageMessage();

        assertThat(usage).contains("http://localhost:8080", "Default: 1000", "Default: 100000", "Default: 300",
                "Default: 5", "Default: 20210101", "--label", "--csv", "--out", "--rate", "--get-ratio", "--retries",
                "Default: " + RunCommand.RETRIES_RIDING_OUT_A_RESTART, "Retry-After", "--io-threads", "--watch-pid");
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
}
