package com.supermarket.loadclient.run;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time of processes, to say where a run's CPU went: this process from the JVM, others from
 * Linux's {@code /proc/<pid>/stat} (user + system time of all the process's threads, fields 14
 * and 15, in clock ticks of 1/100 s, the value of {@code USER_HZ} on every Linux architecture
 * the platform runs on). Stateless.
 */
final class ProcessCpu {

    private static final double SECONDS_PER_TICK = 0.01;

    private ProcessCpu() {
    }

    /** CPU seconds this JVM has used so far, or NaN where the JVM cannot tell. */
    static double ownSeconds() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long nanos = os.getProcessCpuTime();
            return nanos < 0 ? Double.NaN : nanos / 1e9;
        }
        return Double.NaN;
    }

    /** CPU seconds each named process has used so far; a process that is gone is left out. */
    static Map<String, Double> secondsOf(Map<String, Long> pids) {
        Map<String, Double> seconds = new LinkedHashMap<>();
        pids.forEach((name, pid) -> {
            double used = secondsOf(pid);
            if (!Double.isNaN(used)) {
                seconds.put(name, used);
            }
        });
        return seconds;
    }

    /** CPU seconds of one process, or NaN if it is gone (or this is not Linux). */
    static double secondsOf(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
        // The command name (field 2) is in parentheses and may hold spaces: count from after it.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * SECONDS_PER_TICK;
    }

    /** What each process used between two samples; a process missing from either is left out. */
    static Map<String, Double> used(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> used = new LinkedHashMap<>();
        before.forEach((name, start) -> {
            Double end = after.get(name);
            if (end != null) {
                used.put(name, end - start);
            }
        });
        return used;
    }
}
