package com.supermarket.tools.rabbit;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import com.supermarket.tools.Input;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code shard-counts}: the messages each shard queue received, from the management API's queue list. Not thread-safe. */
@Command(name = "shard-counts", mixinStandardHelpOptions = true,
        description = { "The messages each shard queue received, from the management API.",
                "Reads /api/queues?columns=name,message_stats.publish (a file, or standard input) and prints",
                "\"COUNT QUEUE\" for each shard queue of purchaseX and storeX, sorted by queue name." })
public final class ShardCountsCommand implements Callable<Integer> {

    @Parameters(arity = "0..1", paramLabel = "FILE", description = "The JSON (default: standard input).")
    private Path file;

    @Override
    public Integer call() {
        ManagementJson.shardPublished(Input.read(file)).forEach((name, count) -> System.out.println(count + " " + name));
        return 0;
    }
}
