package com.supermarket.tools.soak;

import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code soak-plan}: a soak's load client rate and fault interval from its options. Not thread-safe. */
@Command(name = "soak-plan", mixinStandardHelpOptions = true,
        description = { "A soak's purchases per hour and store, and its fault interval.",
                "Prints \"PER_HOUR FAULT_SECONDS\": the purchases per hour and store that make each of --stores send",
                "9 hours of purchases (and --get-ratio GETs per purchase) in --minutes at --rate requests/s in all, and",
                "--fault-every minutes in seconds; exit 1 when the purchases per hour come to less than one." })
public final class SoakPlanCommand implements Callable<Integer> {

    @Option(names = "--minutes", required = true)
    private double minutes;

    @Option(names = "--rate", required = true, description = "Requests per second, all stores together.")
    private double rate;

    @Option(names = "--stores", required = true)
    private int stores;

    @Option(names = "--get-ratio", description = "GETs per POST.")
    private double getRatio;

    @Option(names = "--fault-every", description = "Minutes between faults (0: none).")
    private double faultEvery;

    @Override
    public Integer call() {
        long perHour = perHour(minutes, rate, stores, getRatio);
        System.out.println(perHour + " " + Math.round(faultEvery * 60));
        return perHour >= 1 ? 0 : 1;
    }

    static long perHour(double minutes, double rate, int stores, double getRatio) {
        if (stores < 1 || getRatio < 0) {
            throw new IllegalArgumentException("stores must be positive and the GET ratio not negative");
        }
        return Math.round(minutes * 60 * rate / (9.0 * stores * (1 + getRatio)));
    }
}
