package com.supermarket.loadclient.run;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.supermarket.loadclient.result.RunEnvironment;

/**
 * Finds what the client can see of where it runs, for {@link RunEnvironment}: the machine, the
 * JVM, the commit of its checkout. Every probe is best effort: what cannot be read is left null.
 * Stateless; each call asks again.
 */
final class EnvironmentProbe {

    static final String CLIENT_VERSION = "load-client 0.1.0";

    private static final long GIT_TIMEOUT_SECONDS = 5;

    private EnvironmentProbe() {
    }

    static RunEnvironment collect(double loadAverageAtStart, List<String> commandLine,
            Map<String, String> clientSettings, Map<String, String> declared) {
        Path checkout = checkoutFolder();
        String commit = git(checkout, "rev-parse", "HEAD");
        String changes = commit == null ? null : git(checkout, "status", "--porcelain", "--untracked-files=no");
        return new RunEnvironment(CLIENT_VERSION, commit, changes == null ? null : !changes.isEmpty(), host(),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
                cpuModel(), Runtime.getRuntime().availableProcessors(), memoryBytes(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
                        + System.getProperty("java.vm.vendor") + ")",
                ManagementFactory.getRuntimeMXBean().getInputArguments(), loadAverageAtStart, loadAverage(),
                commandLine, clientSettings, declared);
    }

    /** The one-minute load average, or -1 where the system has none. */
    static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /**
     * The folder of the jar the client runs from ({@code java -jar} puts it alone on the class
     * path), so the commit is that of the checkout that built it; else the working folder.
     */
    private static Path checkoutFolder() {
        String classPath = System.getProperty("java.class.path", "");
        if (!classPath.isEmpty() && !classPath.contains(File.pathSeparator) && classPath.endsWith(".jar")) {
            Path parent = Path.of(classPath).toAbsolutePath().getParent();
            if (parent != null) {
                return parent;
            }
        }
        return Path.of("").toAbsolutePath();
    }

    /** {@code git -C folder args...}'s output, trimmed, or null if git is missing or fails. */
    private static String git(Path folder, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-C", folder.toString()));
        command.addAll(List.of(args));
        try {
            Process git = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] output = git.getInputStream().readAllBytes();
            if (!git.waitFor(GIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                git.destroyForcibly();
                return null;
            }
            return git.exitValue() == 0 ? new String(output, StandardCharsets.UTF_8).trim() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static String host() {
        try {
            Path kernelName = Path.of("/proc/sys/kernel/hostname");
            if (Files.isReadable(kernelName)) {
                return Files.readString(kernelName).trim();
            }
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return null;
        }
    }

    private static String cpuModel() {
        try {
            Path cpuinfo = Path.of("/proc/cpuinfo");
            if (!Files.isReadable(cpuinfo)) {
                return null;
            }
            for (String line : Files.readAllLines(cpuinfo)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private static long memoryBytes() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getTotalMemorySize() : -1;
    }
}
