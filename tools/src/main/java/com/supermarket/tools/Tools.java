package com.supermarket.tools;

import com.supermarket.tools.faults.ThroughputCommand;
import com.supermarket.tools.logs.LogSummaryCommand;
import com.supermarket.tools.prometheus.MetricCommand;
import com.supermarket.tools.proxy.FaultProxy;
import com.supermarket.tools.rabbit.ClusterCommands;
import com.supermarket.tools.rabbit.QueueDepthCommand;
import com.supermarket.tools.rabbit.ShardBalanceCommand;
import com.supermarket.tools.rabbit.ShardCountsCommand;
import com.supermarket.tools.soak.SoakPlanCommand;
import com.supermarket.tools.soak.SoakSamplerCommand;

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
        subcommands = { FaultProxy.class, MetricCommand.class, ShardCountsCommand.class, ShardBalanceCommand.class,
            QueueDepthCommand.class, ClusterCommands.RunningNodes.class, ClusterCommands.MostLeaders.class,
            ClusterCommands.Connections.class, LogSummaryCommand.class, ThroughputCommand.class, SoakPlanCommand.class,
            SoakSamplerCommand.class, CommandLine.HelpCommand.class })
public final class Tools {

    private Tools() {
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit status. */
    public static int execute(String... args) {
        return new CommandLine(new Tools()).execute(args);
    }
}
