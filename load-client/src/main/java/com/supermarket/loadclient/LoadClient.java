package com.supermarket.loadclient;

import java.util.Set;

import com.supermarket.loadclient.report.ReportCommand;
import com.supermarket.loadclient.run.RunCommand;
import com.supermarket.loadclient.soak.SoakReportCommand;
import com.supermarket.loadclient.stub.StubCommand;
import com.supermarket.loadclient.verify.CheckGetsCommand;
import com.supermarket.loadclient.verify.VerifyCommand;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of the load client: {@code run} (the default when no subcommand is named),
 * {@code report}, {@code stub}, {@code verify}, {@code check-gets} and {@code soak-report}. Not thread-safe; used once per process.
 */
@Command(name = "load-client", mixinStandardHelpOptions = true, version = "load-client 0.1.0",
        description = "Load client for the supermarket purchase API.",
        subcommands = { RunCommand.class, ReportCommand.class, StubCommand.class, VerifyCommand.class,
            CheckGetsCommand.class, SoakReportCommand.class })
public final class LoadClient {

    private static final Set<String> TOP_LEVEL = Set.of("run", "report", "stub", "verify", "check-gets", "soak-report", "help", "-h", "--help",
            "-V", "--version");

    private LoadClient() {
    }

    public static void main(String[] args) {
        // Charts are drawn off-screen; no display is needed (or wanted) on servers.
        System.setProperty("java.awt.headless", "true");
        // Netty's sampling leak detector costs CPU on every buffer; the client's buffers are
        // released in one place each, and the tests run with the detector on.
        System.setProperty("io.netty.leakDetection.level", "disabled");
        // Netty 4.2's default adaptive allocator cost about 10% more CPU per request than the
        // pooled one here (17.6 vs 15.8 µs, four alternating pairs against the stub).
        if (System.getProperty("io.netty.allocator.type") == null) {
            System.setProperty("io.netty.allocator.type", "pooled");
        }
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit status; {@code run} is implied when no subcommand is named. */
    public static int execute(String... args) {
        String[] effective = args.length == 0 || !TOP_LEVEL.contains(args[0]) ? prepend("run", args) : args;
        CommandLine commandLine = new CommandLine(new LoadClient());
        commandLine.setCaseInsensitiveEnumValuesAllowed(true);
        return commandLine.execute(effective);
    }

    private static String[] prepend(String first, String[] rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
