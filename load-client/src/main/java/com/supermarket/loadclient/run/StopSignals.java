package com.supermarket.loadclient.run;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Turns SIGINT (Ctrl-C) and SIGTERM into a {@link RunStop} while a run goes, so the run ends with
 * its summary and every file written instead of the JVM exiting mid-run. A second signal quits at
 * once, exit status {@link RunCommand#EXIT_INTERRUPTED}, writing nothing more. {@link #close}
 * restores the handlers found. Uses {@code sun.misc.Signal} (module {@code jdk.unsupported}), the
 * JDK's only way to handle a signal rather than only hear of it in a shutdown hook, whose exit
 * status cannot be chosen. Thread-safety: install and close from one thread; the handlers run on
 * the JVM's signal thread.
 */
final class StopSignals implements AutoCloseable {

    private static final String[] SIGNALS = { "INT", "TERM" };

    private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();

    private StopSignals() {
    }

    static StopSignals install(RunStop stop, PrintStream err) {
        StopSignals installed = new StopSignals();
        for (String name : SIGNALS) {
            try {
                Signal signal = new Signal(name);
                installed.previous.put(signal, Signal.handle(signal, caught -> {
                    if (!stop.request("SIG" + caught.getName())) {
                        err.println("\n[load-client] SIG" + caught.getName() + " again: quitting without results");
                        err.flush();
                        Runtime.getRuntime().halt(RunCommand.EXIT_INTERRUPTED);
                    }
                }));
            } catch (IllegalArgumentException e) {
                // The signal is unknown here or taken by the JVM (e.g. -Xrs): the JVM's default stays.
            }
        }
        return installed;
    }

    @Override
    public void close() {
        previous.forEach(Signal::handle);
    }
}
