package com.supermarket.tools.soak;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;

import com.supermarket.tools.prometheus.PrometheusText;
import com.supermarket.tools.rabbit.ManagementJson;

/**
 * One row of a soak's samples.csv per call of {@link #row(double)}: the purchases accepted so far
 * and per second, each service's heap (used, and live after the last old-generation collection),
 * store-service's write-ahead log and newest snapshot, the idempotency store's memory and keys, the
 * broker's queued messages, and each watched process's CPU milliseconds per purchase accepted
 * since the last row. What it reads comes from {@link Sources}; a source that does not answer
 * leaves its cells empty. purchase-api's counter starts again at 0 when it restarts (a new pid,
 * or a count below the last one): the new count is then all new. Not thread-safe: one sampler
 * thread.
 */
final class SoakSampler {

    static final List<String> SERVICES = List.of("purchase-api", "store-service", "purchases-service");
    private static final double MIB = 1024 * 1024;

    /** What a row reads; each answer is empty (or "") when its source does not answer. */
    interface Sources {
        /** The Prometheus scrape of the service on this management port, "" without an answer. */
        String scrape(String service);

        /** The management API's queue list with their messages, "" without an answer. */
        String queues();

        /** The idempotency store's used memory and key count. */
        OptionalLong[] redis();

        /** The watched processes' pids by name, as the script wrote them last. */
        Map<String, Long> pids();

        /** Every line of the faults log ("SECONDS FAULT" a line) so far. */
        List<String> faultLines();

        OptionalLong cpuTicks(long pid);

        long walBytes();

        OptionalLong newestSnapshotBytes();
    }

    private final Sources sources;
    private final List<String> cpuNames;
    private final double ticksPerSecond;
    private final Map<String, Long> lastTicks = new HashMap<>();
    private final Map<String, Long> lastPid = new HashMap<>();
    private long accepted;
    private long lastRaw;
    private Long lastApiPid;
    private double lastT;
    private int faultsSeen;
    private int rows;

    SoakSampler(Sources sources, List<String> cpuNames, double ticksPerSecond) {
        this.sources = sources;
        this.cpuNames = List.copyOf(cpuNames);
        this.ticksPerSecond = ticksPerSecond;
    }

    /** The CSV header, in the order soak-report reads. */
    String header() {
        List<String> columns = new ArrayList<>(List.of("t_s", "fault", "accepted", "accepted_per_s"));
        for (String service : SERVICES) {
            columns.add(service + "_heap_used_bytes");
            columns.add(service + "_heap_live_bytes");
        }
        columns.addAll(List.of("store_wal_bytes", "store_snapshot_bytes", "redis_used_bytes", "redis_keys", "queue_messages"));
        cpuNames.forEach(name -> columns.add("cpu_ms_per_purchase_" + name));
        return String.join(",", columns);
    }

    /** The row at {@code t} seconds into the run. */
    List<String> row(double t) {
        rows++;
        Map<String, Long> pids = sources.pids();
        Map<String, PrometheusText> scrapes = new HashMap<>();
        SERVICES.forEach(s -> scrapes.put(s, PrometheusText.parse(sources.scrape(s))));

        Long delta = null;
        OptionalDouble raw = scrapes.get("purchase-api").sum("api_purchases_accepted_total", Map.of());
        if (raw.isPresent()) {
            long now = Math.round(raw.getAsDouble());
            Long apiPid = pids.get("purchase-api");
            delta = apiPid == null || !apiPid.equals(lastApiPid) || now < lastRaw ? now : now - lastRaw;
            accepted += delta;
            lastRaw = now;
            lastApiPid = apiPid;
        }
        double dt = t - lastT;
        lastT = t;

        List<String> cells = new ArrayList<>();
        cells.add(String.format(Locale.ROOT, "%.1f", t));
        cells.add(newFaults());
        cells.add(Long.toString(accepted));
        cells.add(delta == null || dt <= 0 ? "" : Long.toString(Math.round(delta / dt)));
        for (String service : SERVICES) {
            PrometheusText scrape = scrapes.get(service);
            cells.add(whole(scrape.sum("jvm_memory_used_bytes", Map.of("area", "heap"))));
            // The live size reads 0 until the first collection of the old generation: not yet known.
            OptionalDouble live = scrape.sum("jvm_gc_live_data_size_bytes", Map.of());
            cells.add(live.isPresent() && live.getAsDouble() == 0 ? "" : whole(live));
        }
        cells.add(Long.toString(sources.walBytes()));
        cells.add(text(sources.newestSnapshotBytes()));
        OptionalLong[] redis = sources.redis();
        cells.add(text(redis[0]));
        cells.add(text(redis[1]));
        String queues = sources.queues();
        cells.add(queues.isBlank() ? "" : text(ManagementJson.messages(queues)));
        for (String name : cpuNames) {
            cells.add(cpuCell(name, pids.get(name), delta));
        }
        return cells;
    }

    /** The faults struck since the last row, as FAULT@SECONDS joined by "+". */
    private String newFaults() {
        List<String> lines = sources.faultLines().stream().filter(l -> !l.isBlank()).toList();
        List<String> struck = new ArrayList<>();
        for (String line : lines.subList(Math.min(faultsSeen, lines.size()), lines.size())) {
            String[] words = line.strip().split("\\s+");
            if (words.length == 2) {
                struck.add(words[1] + "@" + words[0]);
            }
        }
        faultsSeen = lines.size();
        return String.join("+", struck);
    }

    /** CPU ms per purchase accepted since the last row; a new pid (a restart) is measured from its start. */
    private String cpuCell(String name, Long pid, Long delta) {
        if (pid == null) {
            return "";
        }
        OptionalLong ticks = sources.cpuTicks(pid);
        if (ticks.isEmpty()) {
            return "";
        }
        long before = pid.equals(lastPid.get(name)) ? lastTicks.getOrDefault(name, 0L) : 0;
        lastTicks.put(name, ticks.getAsLong());
        lastPid.put(name, pid);
        if (delta == null || delta <= 0 || rows <= 1) {
            return "";
        }
        return String.format(Locale.ROOT, "%.4f", (ticks.getAsLong() - before) * 1000 / ticksPerSecond / delta);
    }

    /** The row in a line for a person. */
    static String describe(List<String> row) {
        return String.format(Locale.ROOT,
                "t %5.0fs accepted %9s (%5s/s) heap MiB api %4.0f store %4.0f purchases %4.0f | wal %5.1f MiB snapshots %5.1f MiB"
                        + " | redis %5.1f MiB %8s keys | queued %6s%s",
                number(row.get(0)), row.get(2), row.get(3), number(row.get(4)) / MIB, number(row.get(6)) / MIB,
                number(row.get(8)) / MIB, number(row.get(10)) / MIB, number(row.get(11)) / MIB, number(row.get(12)) / MIB,
                row.get(13), row.get(14), row.get(1).isEmpty() ? "" : " | fault " + row.get(1));
    }

    private static double number(String cell) {
        return cell.isEmpty() ? 0 : Double.parseDouble(cell);
    }

    private static String whole(OptionalDouble value) {
        return value.isPresent() ? String.format(Locale.ROOT, "%.0f", value.getAsDouble()) : "";
    }

    private static String text(OptionalLong value) {
        return value.isPresent() ? Long.toString(value.getAsLong()) : "";
    }
}
