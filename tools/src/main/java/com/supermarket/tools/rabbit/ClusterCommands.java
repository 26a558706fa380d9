package com.supermarket.tools.rabbit;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.Callable;

import com.supermarket.tools.Input;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The commands scripts/rabbitmq-cluster.sh and the cluster faults read a cluster's state with. */
public final class ClusterCommands {

    private ClusterCommands() {
    }

    /** {@code running-nodes}. Not thread-safe. */
    @Command(name = "running-nodes", mixinStandardHelpOptions = true,
            description = { "The running nodes of a cluster.", "Reads rabbitmqctl cluster_status --formatter json (a file, or standard input); prints its running nodes, comma-separated." })
    public static final class RunningNodes implements Callable<Integer> {

        @Parameters(arity = "0..1", paramLabel = "FILE", description = "The JSON (default: standard input).")
        private Path file;

        @Override
        public Integer call() {
            System.out.println(String.join(", ", ManagementJson.runningNodes(Input.read(file))));
            return 0;
        }
    }

    /** {@code most-leaders}. Not thread-safe. */
    @Command(name = "most-leaders", mixinStandardHelpOptions = true,
            description = { "Which node leads the most quorum queues.", "Reads /api/queues?columns=type,leader (a file, or standard input); prints the number (1-based, in",
                    "the order of the --node options) of the node that leads the most quorum queues; exit 1 when none leads any." })
    public static final class MostLeaders implements Callable<Integer> {

        @Option(names = "--node", required = true, paramLabel = "NAME", description = "A node's name, e.g. rabbit@sm1; repeatable, in order.")
        private List<String> nodes;

        @Parameters(arity = "0..1", paramLabel = "FILE", description = "The JSON (default: standard input).")
        private Path file;

        @Override
        public Integer call() {
            OptionalInt node = ManagementJson.mostLeaders(Input.read(file), nodes);
            if (node.isEmpty()) {
                System.err.println("no quorum queue");
                return 1;
            }
            System.out.println(node.getAsInt());
            return 0;
        }
    }

    /** {@code connections}. Not thread-safe. */
    @Command(name = "connections", mixinStandardHelpOptions = true,
            description = { "A cluster's client connections, by node.", "Reads /api/connections?columns=node,name,user_provided_name (a file, or standard input); prints",
                    "\"NODE CONNECTION CLIENT-NAME\" a line, by node and connection." })
    public static final class Connections implements Callable<Integer> {

        @Parameters(arity = "0..1", paramLabel = "FILE", description = "The JSON (default: standard input).")
        private Path file;

        @Override
        public Integer call() {
            ManagementJson.connections(Input.read(file)).forEach(System.out::println);
            return 0;
        }
    }
}
