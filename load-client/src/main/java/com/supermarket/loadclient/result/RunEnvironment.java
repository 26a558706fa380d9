package com.supermarket.loadclient.result;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where and how a run was made, so that a result read months later, or beside one from another
 * machine, says what it measured. Immutable. Absent (null) in result files written before it was
 * recorded.
 *
 * @param clientVersion       the load client's version
 * @param gitCommit           the commit of the checkout the client ran from ({@code git rev-parse
 *                            HEAD} in the jar's folder, else the working folder), or null if none
 * @param gitDirty            whether that checkout had uncommitted changes to tracked files; null
 *                            when unknown
 * @param host                the machine's host name
 * @param os                  operating system name, version and architecture
 * @param cpuModel            the processor's model name (Linux {@code /proc/cpuinfo}), or null
 * @param cores               processors available to the client's JVM
 * @param memoryBytes         the machine's physical memory
 * @param jvm                 the client's JVM: name, version, vendor
 * @param jvmArguments        the client's JVM options
 * @param loadAverageAtStart  the one-minute load average just before the run (-1 if unknown)
 * @param loadAverageAtEnd    the one-minute load average just after it
 * @param commandLine         the {@code run} options as given
 * @param clientSettings      every option of {@code run} with the value it had, defaults included
 * @param declared            what the caller declared with {@code --environment KEY=VALUE}: the
 *                            services' settings, the instance size, anything the client cannot see
 */
public record RunEnvironment(String clientVersion, String gitCommit, Boolean gitDirty, String host, String os,
        String cpuModel, int cores, long memoryBytes, String jvm, List<String> jvmArguments, double loadAverageAtStart,
        double loadAverageAtEnd, List<String> commandLine, Map<String, String> clientSettings,
        Map<String, String> declared) {

    public RunEnvironment {
        jvmArguments = jvmArguments == null ? List.of() : List.copyOf(jvmArguments);
        commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
        clientSettings = sorted(clientSettings);
        declared = sorted(declared);
    }

    private static Map<String, String> sorted(Map<String, String> map) {
        return map == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(map));
    }
}
