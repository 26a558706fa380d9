package com.supermarket.tools.rabbit;

import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

import com.supermarket.tools.Input;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code queue-depth}: the messages in all queues, from the management API's queue list. Not thread-safe. */
@Command(name = "queue-depth", mixinStandardHelpOptions = true,
        description = { "The messages in all queues, from the management API.",
                "Reads /api/queues?columns=name,messages (a file, or standard input) and prints the messages of all",
                "queues together; nothing (exit 1) when no queue states its messages." })
public final class QueueDepthCommand implements Callable<Integer> {

    @Parameters(arity = "0..1", paramLabel = "FILE", description = "The JSON (default: standard input).")
    private Path file;

    @Override
    public Integer call() {
        OptionalLong messages = ManagementJson.messages(Input.read(file));
        messages.ifPresent(System.out::println);
        return messages.isPresent() ? 0 : 1;
    }
}
