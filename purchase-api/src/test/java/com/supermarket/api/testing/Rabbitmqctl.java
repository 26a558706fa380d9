package com.supermarket.api.testing;

import com.supermarket.broker.testing.TestServices;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code rabbitmqctl} on the shared test broker ({@link TestServices#rabbitmqctl}), for the one
 * test that raises a real memory alarm. Fails loudly (never skips) when it cannot run.
 */
public final class Rabbitmqctl {

    private Rabbitmqctl() {
    }

    /** The current memory high watermark as {@code set_vm_memory_high_watermark} arguments. */
    public static List<String> memoryHighWatermark() {
        String value = TestServices.rabbitmqctl("eval", "vm_memory_monitor:get_vm_memory_high_watermark().").strip();
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
        TestServices.rabbitmqctl(command.toArray(String[]::new));
    }
}
