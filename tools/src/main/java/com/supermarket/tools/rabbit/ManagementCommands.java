package com.supermarket.tools.rabbit;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;

import com.supermarket.tools.Input;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The commands that read RabbitMQ's answers (the management API's JSON, {@code rabbitmqctl
 * --formatter json}) from a file or standard input, as the scripts pipe them from curl: each
 * static method a command ({@link com.supermarket.tools.Tools} adds them), returning its exit
 * status. Stateless.
 */
public final class ManagementCommands {

    private ManagementCommands() {
    }

    private static final String FILE = "FILE";
    private static final String FILE_HELP = "The JSON (default: standard input).";

    @Command(name = "shard-counts", mixinStandardHelpOptions = true, description = {
        "The messages each shard queue received, from the management API.",
        "Reads /api/queues?columns=name,message_stats.publish and prints \"COUNT QUEUE\" for each shard queue",
        "of purchaseX, storeX and the store copy groups' storeX.c<c>, sorted by queue name." })
    static int shardCounts(@Parameters(arity = "0..1", paramLabel = FILE, description = FILE_HELP) Path file) {
        ManagementJson.shardPublished(Input.read(file)).forEach((name, count) -> System.out.println(count + " " + name));
        return 0;
    }

    @Command(name = "shard-balance", mixinStandardHelpOptions = true, description = {
        "The balance over the shard queues between two shard-counts.",
        "Reads two shard-counts files (before and after a run) and prints, per sharded exchange, the messages",
        "each shard queue received in between: min, max, max/min, and the queues that received nothing." })
    static int shardBalance(@Parameters(index = "0", paramLabel = "BEFORE") Path before,
            @Parameters(index = "1", paramLabel = "AFTER") Path after) {
        ShardBalance.table(ShardBalance.readCounts(Input.read(before)), ShardBalance.readCounts(Input.read(after)))
                .forEach(System.out::println);
        return 0;
    }

    @Command(name = "queue-depth", mixinStandardHelpOptions = true, description = {
        "The messages in all queues, from the management API.",
        "Reads /api/queues?columns=name,messages and prints the messages of all queues together; nothing",
        "(exit 1) when no queue states its messages." })
    static int queueDepth(@Parameters(arity = "0..1", paramLabel = FILE, description = FILE_HELP) Path file) {
        OptionalLong messages = ManagementJson.messages(Input.read(file));
        messages.ifPresent(System.out::println);
        return messages.isPresent() ? 0 : 1;
    }

    @Command(name = "running-nodes", mixinStandardHelpOptions = true, description = {
        "The running nodes of a cluster, comma-separated.",
        "Reads rabbitmqctl cluster_status --formatter json." })
    static int runningNodes(@Parameters(arity = "0..1", paramLabel = FILE, description = FILE_HELP) Path file) {
        System.out.println(String.join(", ", ManagementJson.runningNodes(Input.read(file))));
        return 0;
    }

    @Command(name = "most-leaders", mixinStandardHelpOptions = true, description = {
        "Which node leads the most quorum queues.",
        "Reads /api/queues?columns=type,leader and prints the number (1-based, in the order of the --node",
        "options) of the node that leads the most quorum queues; exit 1 when none leads any." })
    static int mostLeaders(
            @Option(names = "--node", required = true, paramLabel = "NAME", description = "A node's name, e.g. rabbit@sm1; repeatable, in order.")
            List<String> nodes,
            @Parameters(arity = "0..1", paramLabel = FILE, description = FILE_HELP) Path file) {
        OptionalInt node = ManagementJson.mostLeaders(Input.read(file), nodes);
        if (node.isEmpty()) {
            System.err.println("no quorum queue");
            return 1;
        }
        System.out.println(node.getAsInt());
        return 0;
    }

    @Command(name = "connections", mixinStandardHelpOptions = true, description = {
        "A cluster's client connections, by node.",
        "Reads /api/connections?columns=node,name,user_provided_name and prints \"NODE CONNECTION CLIENT-NAME\"",
        "a line, by node and connection." })
    static int connections(@Parameters(arity = "0..1", paramLabel = FILE, description = FILE_HELP) Path file) {
        ManagementJson.connections(Input.read(file)).forEach(System.out::println);
        return 0;
    }
}
