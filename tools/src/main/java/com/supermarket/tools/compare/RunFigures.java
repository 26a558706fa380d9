package com.supermarket.tools.compare;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.databind.JsonNode;

/**
 * One measured run of one commit, as scripts/compare.sh tables it: the load client's own figures
 * (throughput, POST latency) and, from the {@link PipelineSamples} recorded beside it, what the
 * pipeline sustained: when the purchases were all stored and counted (the drain), the stored rate
 * over run and drain, the largest backlog, the purchases per published message, and each
 * process's CPU milliseconds per accepted purchase over run and drain together. A figure that
 * could not be had is NaN. Immutable.
 *
 * @param run               what was run: the client's label, stores, closed loop or the offered rate
 * @param requestsPerSecond the client's throughput (accepted requests per second of its run)
 * @param postP50Ms         POST median
 * @param postP99Ms         POST 99th percentile
 * @param accepted          purchases accepted
 * @param storedPerSecond   accepted purchases over the time from the run's start to the drain's end
 * @param drainSeconds      from the run's last answer until every accepted purchase was stored and counted
 * @param backlogPeak       the most purchases accepted and not yet stored at one time
 * @param perMessage        purchases per message purchase-api published
 * @param balance           the purchase shard queues' max/min, as the commit's benchmark wrote it ("" if it did not)
 * @param cpuMsPerPurchase  CPU ms per accepted purchase over run and drain, by process, in sampler order
 */
record RunFigures(String run, double requestsPerSecond, double postP50Ms, double postP99Ms, long accepted,
        double storedPerSecond, double drainSeconds, double backlogPeak, double perMessage, String balance,
        Map<String, Double> cpuMsPerPurchase) {

    private static final Pattern BALANCE = Pattern.compile("^purchaseX: (\\d+) shard queues.*max/min (\\S+?)[;,]", Pattern.MULTILINE);

    /** The sum of the processes' CPU ms per purchase; NaN when any is missing. */
    double totalCpuMsPerPurchase() {
        return cpuMsPerPurchase.values().stream().mapToDouble(Double::doubleValue).sum();
    }

    /**
     * The figures of one load-client result file.
     *
     * @param result         the result JSON
     * @param samples        the pipeline samples taken during the benchmark that ran it
     * @param shards         the commit's shard table for the run ({@code NAME.shards.md}), "" when none
     * @param ticksPerSecond the clock ticks per second of /proc (getconf CLK_TCK)
     */
    static RunFigures of(JsonNode result, PipelineSamples samples, String shards, double ticksPerSecond) {
        JsonNode post = result.path("latency").path("POST");
        long accepted = result.path("purchases").has("accepted") ? result.path("purchases").path("accepted").asLong()
                : post.path("count").asLong();
        double start = java.time.Instant.parse(result.path("startedAt").asString()).toEpochMilli();
        double end = start + result.path("wallTimeSeconds").asDouble() * 1000;
        OptionalDouble drained = samples.drainedAt(start, end, accepted);
        double drainEnd = drained.orElse(Double.NaN);
        Map<String, Double> cpu = new LinkedHashMap<>();
        for (String process : samples.processes()) {
            OptionalDouble from = samples.ticksAt(process, start);
            OptionalDouble to = drained.isPresent() ? samples.ticksAt(process, drainEnd) : OptionalDouble.empty();
            cpu.put(process, from.isPresent() && to.isPresent() && accepted > 0
                    ? (to.getAsDouble() - from.getAsDouble()) / ticksPerSecond * 1000 / accepted : Double.NaN);
        }
        OptionalDouble messagesFrom = samples.at("api_messages", start);
        OptionalDouble messagesTo = drained.isPresent() ? samples.at("api_messages", drainEnd) : OptionalDouble.empty();
        double messages = messagesFrom.isPresent() && messagesTo.isPresent() ? messagesTo.getAsDouble() - messagesFrom.getAsDouble() : 0;
        OptionalInt backlog = samples.backlogPeak(start, drained.isPresent() ? drainEnd : end,
                t -> acceptedBy(result.path("timeline"), accepted, (t - start) / 1000));
        String mode = result.path("parameters").path("rate").asDouble() > 0
                ? "paced " + Math.round(result.path("parameters").path("rate").asDouble()) + "/s" : "closed loop";
        return new RunFigures(result.path("label").asString() + ", " + result.path("parameters").path("maxStores").asInt()
                + " stores, " + mode,
                result.path("throughput").asDouble(), post.path("medianMs").asDouble(Double.NaN),
                post.path("p99Ms").asDouble(Double.NaN), accepted,
                drained.isPresent() ? accepted / ((drainEnd - start) / 1000) : Double.NaN,
                drained.isPresent() ? Math.max(0, (drainEnd - end) / 1000) : Double.NaN,
                backlog.isPresent() ? backlog.getAsInt() : Double.NaN,
                messages > 0 ? accepted / messages : Double.NaN, balance(shards), cpu);
    }

    /**
     * The purchases accepted by {@code seconds} into the run, from the client's timeline (requests
     * per second in about one-second intervals) scaled so that the whole run makes {@code accepted}.
     */
    static double acceptedBy(JsonNode timeline, long accepted, double seconds) {
        double total = 0;
        double by = 0;
        double last = 0;
        for (JsonNode point : timeline) {
            double at = point.path("atSeconds").asDouble();
            double requests = point.path("requestsPerSecond").asDouble() * (at - last);
            total += requests;
            if (at <= seconds) {
                by += requests;
            } else if (last < seconds) {
                by += requests * (seconds - last) / (at - last);
            }
            last = at;
        }
        return total > 0 ? accepted * by / total : 0;
    }

    /** "max/min over N queues" of purchaseX from a shard table; "" when there is none. */
    static String balance(String shards) {
        Matcher matcher = BALANCE.matcher(shards);
        return matcher.find() ? matcher.group(2) + " (" + matcher.group(1) + " queues)" : "";
    }
}
