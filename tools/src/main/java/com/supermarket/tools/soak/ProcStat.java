package com.supermarket.tools.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/** A process's CPU time from Linux's {@code /proc/PID/stat}. Stateless. */
public final class ProcStat {

    private ProcStat() {
    }

    /**
     * User plus system clock ticks from one stat line. The command name (field 2) is in
     * parentheses and may hold spaces and parentheses itself, so fields are counted after its
     * last ")": utime and stime are fields 14 and 15.
     */
    public static long cpuTicks(String statLine) {
        int close = statLine.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: " + statLine);
        }
        String[] fields = statLine.substring(close + 1).strip().split("\\s+");
        if (fields.length < 13) {
            throw new IllegalArgumentException("too few fields in /proc/PID/stat: " + statLine);
        }
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** The ticks of process {@code pid}; empty when it is gone or unreadable. */
    public static OptionalLong cpuTicks(Path proc, long pid) {
        try {
            return OptionalLong.of(cpuTicks(Files.readString(proc.resolve(Long.toString(pid)).resolve("stat"))));
        } catch (IOException | IllegalArgumentException e) {
            return OptionalLong.empty();
        }
    }
}
