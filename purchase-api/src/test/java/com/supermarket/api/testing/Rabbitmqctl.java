package com.supermarket.api.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code rabbitmqctl} on the local broker, for the one test that raises a real memory
 * alarm. Fails loudly (never skips) when the tool is missing.
 */
public final class Rabbitmqctl {

    private Rabbitmqctl() {
    }

    /** The current memory high watermark as {@code set_vm_memory_high_watermark} arguments. */
    public static List<String> memoryHighWatermark() {
        String value = run("eval", "vm_memory_monitor:get_vm_memory_high_watermark().").strip();
        var absolute = java.util.regex.Pattern.compile("\\{absolute,\\s*(\\d+)}").matcher(value);
        if (absolute.find()) {
            return List.of("absolute", absolute.group(1));
        }
        if (!value.matches("[0-9.]+")) {
            throw new IllegalStateException("unexpected memory high watermark: " + value);
        }
        return List.of(value);
    }

    public static void setMemoryHighWatermark(List<String> arguments) {
        List<String> command = new ArrayList<>(List.of("set_vm_memory_high_watermark"));
        command.addAll(arguments);
        run(command.toArray(String[]::new));
    }

    public static String run(String... arguments) {
        List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q"));
        command.addAll(List.of(arguments));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("rabbitmqctl is needed on the PATH for this test (it raises a real "
                    + "memory alarm on the local broker): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
