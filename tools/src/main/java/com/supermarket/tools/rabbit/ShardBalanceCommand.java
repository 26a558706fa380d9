package com.supermarket.tools.rabbit;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import com.supermarket.tools.Input;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code shard-balance}: the balance table between two shard-counts readings. Not thread-safe. */
@Command(name = "shard-balance", mixinStandardHelpOptions = true,
        description = { "The balance over the shard queues between two shard-counts.",
                "Reads two shard-counts files (before and after a run) and prints, per sharded exchange, the messages",
                "each shard queue received in between: min, max, max/min, and the queues that received nothing." })
public final class ShardBalanceCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "BEFORE")
    private Path before;

    @Parameters(index = "1", paramLabel = "AFTER")
    private Path after;

    @Override
    public Integer call() {
        ShardBalance.table(ShardBalance.readCounts(Input.read(before)), ShardBalance.readCounts(Input.read(after)))
                .forEach(System.out::println);
        return 0;
    }
}
