package com.supermarket.loadclient.verify;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import com.supermarket.loadclient.LoadClient;

/**
 * A load client command run in the test's JVM: its exit status and what it printed. One at a
 * time (it swaps {@code System.out} and {@code System.err}).
 */
record CommandOutcome(int status, String out, String err) {

    static synchronized CommandOutcome run(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(outBytes, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(errBytes, true, StandardCharsets.UTF_8));
        try {
            int status = LoadClient.execute(args);
            return new CommandOutcome(status, outBytes.toString(StandardCharsets.UTF_8), errBytes.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }
}
