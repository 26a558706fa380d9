package com.supermarket.tools;

import com.supermarket.tools.compare.CompareReportCommand;
import com.supermarket.tools.compare.PipelineSamplerCommand;
import com.supermarket.tools.logs.LogSummaryCommand;
import com.supermarket.tools.prometheus.MetricCommand;
import com.supermarket.tools.proxy.FaultProxy;
import com.supermarket.tools.rabbit.ManagementCommands;
import com.supermarket.tools.rates.RateCommands;
import com.supermarket.tools.soak.SoakSamplerCommand;

import java.util.List;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of the tools jar the scripts run: the fault proxy, and the data work of the scripts
 * (reading Prometheus scrapes and the broker's management API, tables and arithmetic), so that the
 * scripts only start and stop processes. Each command reads a file or standard input and prints
 * plain lines a script can use as they are. Not thread-safe; used once per process.
 */
@Command(name = "tools", mixinStandardHelpOptions = true, version = "tools 0.1.0",
        description = "What the scripts run besides the services and the load client.",
        subcommands = { FaultProxy.class, MetricCommand.class, LogSummaryCommand.class, SoakSamplerCommand.class,
            PipelineSamplerCommand.class, CompareReportCommand.class,
            CommandLine.HelpCommand.class })
public final class Tools {

    private Tools() {
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit status. */
    public static int execute(String... args) {
        CommandLine commandLine = new CommandLine(new Tools());
        // The small commands are static methods, a class of them per subject.
        for (Class<?> commands : List.of(ManagementCommands.class, RateCommands.class)) {
            CommandLine.getCommandMethods(commands, null).forEach(method -> {
                CommandLine command = new CommandLine(method);
                commandLine.addSubcommand(command.getCommandName(), command);
            });
        }
        return commandLine.execute(args);
    }
}
