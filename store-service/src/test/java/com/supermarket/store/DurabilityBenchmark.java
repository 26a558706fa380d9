package com.supermarket.store;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseBatch;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.Topology;
import com.supermarket.contract.WireFormat;
import com.supermarket.store.durability.FullState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Benchmarks of the durable counts against the real broker, with store-service as its own
 * process from the built jar (not run by the tests; see store-service/README.md, Durability):
 *
 * <ul>
 *   <li>{@code cost [rounds] [messages] [purchasesPerMessage]}: fills the {@code storeX} shard
 *       queues of a fresh vhost with batch messages (stores 1..1,024, items 1..100,000, 5 lines
 *       each), then starts store-service with durability on or off (alternating, side by side)
 *       and times how fast it drains them: purchases/s and the process's CPU per 1,000
 *       purchases, from the first purchase counted to the last.</li>
 *   <li>{@code restart [rounds] [logMiB]}: writes the worst state a restart meets (every one of
 *       1,024 stores with 100,000 items and a full dedup window in the snapshot, then
 *       {@code logMiB} of log to replay) and times {@code java -jar} until readiness is UP.</li>
 * </ul>
 *
 * Run: {@code ./mvnw -B -ntp -pl store-service -am -Pjmh -DskipTests clean verify -Dbench.phase=verify
 * -Dbench.main=com.supermarket.store.DurabilityBenchmark -Djmh.args="cost 3"}.
 */
public final class DurabilityBenchmark {

    private static final int STORES = 1024;
    private static final int ITEMS = 100_000;
    private static final int SHARDS = 4;
    private static final String PORT = System.getenv().getOrDefault("STORE_PORT", "18401");
    private static final String MANAGEMENT_PORT = System.getenv().getOrDefault("STORE_MANAGEMENT_PORT", "18411");

    private DurabilityBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "cost";
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        switch (mode) {
            case "cost" -> cost(rounds, args.length > 2 ? Integer.parseInt(args[2]) : 10_000,
                    args.length > 3 ? Integer.parseInt(args[3]) : 25);
            case "restart" -> restart(rounds, args.length > 2 ? Integer.parseInt(args[2]) : 128);
            default -> throw new IllegalArgumentException("mode is cost or restart: " + mode);
        }
    }

    private static void cost(int rounds, int messages, int perMessage) throws Exception {
        System.out.printf("%d messages x %d purchases per run, %d shards%n", messages, perMessage, SHARDS);
        System.out.println("| round | durability | purchases/s | CPU ms per 1,000 purchases | mean write+fsync, group | load average |");
        System.out.println("|---|---|---|---|---|---|");
        for (int round = 1; round <= rounds; round++) {
            for (boolean enabled : round % 2 == 1 ? new boolean[] {true, false} : new boolean[] {false, true}) {
                try (TestBroker broker = TestBroker.create("store-cost")) {
                    broker.applyTopology(SHARDS);
                    long total = fill(broker, messages, perMessage);
                    Path state = Files.createTempDirectory("store-cost");
                    try (ServiceProcess service = new ServiceProcess(broker, Map.of(
                            "BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS), "SERVER_PORT", PORT, "MANAGEMENT_PORT", MANAGEMENT_PORT,
                            "STORE_DURABILITY_ENABLED", Boolean.toString(enabled),
                            "STORE_DURABILITY_STATE_DIR", state.toString()), serviceJvmOptions())) {
                        service.start("durability-cost");
                        double[] first = waitForApplied(service, 1);
                        double[] last = waitForApplied(service, total);
                        double seconds = (last[1] - first[1]) / 1e9;
                        double purchases = last[0] - first[0];
                        double flushes = service.metric("store_journal_flush_seconds_count");
                        String groups = flushes == 0 ? "-" : String.format("%.1f ms, %.0f messages",
                                service.metric("store_journal_flush_seconds_sum") / flushes * 1000,
                                service.metric("store_journal_flush_messages_sum") / flushes);
                        System.out.printf("| %d | %s | %,.0f | %.1f | %s | %s |%n", round, enabled ? "on" : "off",
                                purchases / seconds, (last[2] - first[2]) / purchases * 1000, groups, loadAverage());
                    } finally {
                        deleteRecursively(state);
                    }
                }
            }
        }
    }

    /** Publishes the backlog with confirms; returns the number of purchases. */
    private static long fill(TestBroker broker, int messages, int perMessage) throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        try (Connection connection = broker.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType(WireFormat.CONTENT_TYPE)
                    .deliveryMode(2).type(PurchaseBatch.MESSAGE_TYPE).build();
            for (int m = 0; m < messages; m++) {
                int bucket = random.nextInt(64);
                List<byte[]> batch = new ArrayList<>(perMessage);
                for (int p = 0; p < perMessage; p++) {
                    int store = 1 + bucket + 64 * random.nextInt(STORES / 64);
                    List<PurchaseItem> items = new ArrayList<>(5);
                    for (int i = 0; i < 5; i++) {
                        items.add(new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(3)));
                    }
                    batch.add(WireFormat.encode(new Purchase(UUID.randomUUID(), store, 1, LocalDate.of(2021, 1, 1),
                            items, Instant.now())));
                }
                channel.basicPublish(Topology.INGRESS_EXCHANGE, Topology.routingKey(1 + bucket, 64), properties,
                        PurchaseBatch.frame(batch));
                if (m % 500 == 499) {
                    channel.waitForConfirmsOrDie(60_000);
                }
            }
            channel.waitForConfirmsOrDie(60_000);
        }
        return (long) messages * perMessage;
    }

    /** Polls until {@code store_purchases_applied_total} reaches {@code target}: {applied, nanoTime, cpu ms}. */
    private static double[] waitForApplied(ServiceProcess service, long target) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!service.process().isAlive()) {
                throw new IllegalStateException("store-service exited, see " + service.output());
            }
            try {
                double applied = service.metric("store_purchases_applied_total");
                if (applied >= target) {
                    return new double[] {applied, System.nanoTime(), cpuMillis(service.process().pid())};
                }
            } catch (java.io.IOException notUpYet) {
                // The HTTP port opens once recovery is done.
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("store-service did not count " + target + " purchases in 10 minutes");
    }

    private static void restart(int rounds, int logMiB) throws Exception {
        Path state = Files.createTempDirectory("store-restart");
        try (TestBroker broker = TestBroker.create("store-restart")) {
            broker.applyTopology(SHARDS);
            System.out.println("State: " + FullState.write(state, STORES, ITEMS, 1024, (long) logMiB << 20));
            System.out.println("| round | state | java -jar to readiness UP | recovery | load average |");
            System.out.println("|---|---|---|---|---|");
            for (int round = 1; round <= rounds; round++) {
                // Side by side with a start on an empty state directory: the difference is recovery.
                Path empty = Files.createTempDirectory("store-restart-empty");
                try {
                    timeStart(broker, round, "empty", empty);
                    timeStart(broker, round, "full", state);
                } finally {
                    deleteRecursively(empty);
                }
            }
        } finally {
            deleteRecursively(state);
        }
    }

    private static void timeStart(TestBroker broker, int round, String what, Path state) throws Exception {
        try (ServiceProcess service = new ServiceProcess(broker, Map.of(
                "BROKER_SHARDS_PER_NODE", Integer.toString(SHARDS), "SERVER_PORT", PORT, "MANAGEMENT_PORT", MANAGEMENT_PORT,
                "STORE_DURABILITY_STATE_DIR", state.toString()), serviceJvmOptions())) {
            long started = System.nanoTime();
            service.start("durability-restart");
            service.awaitReady(Duration.ofMinutes(3));
            long millis = (System.nanoTime() - started) / 1_000_000;
            String recovered = Files.readAllLines(service.output()).stream()
                    .filter(line -> line.contains("Recovered the counts")).findFirst().orElse("?");
            System.out.printf("| %d | %s | %,d ms | %s | %s |%n", round, what, millis,
                    recovered.replaceAll(".*Recovered the counts from \\S+ in ", ""), loadAverage());
        }
    }

    /** -Xmx1g, plus e.g. a flight recording from {@code -Dservice.jvm="-XX:StartFlightRecording=..."}. */
    private static String[] serviceJvmOptions() {
        return ("-Xmx1g " + System.getProperty("service.jvm", "")).trim().split(" +");
    }

    private static double cpuMillis(long pid) throws Exception {
        String[] fields = Files.readString(Path.of("/proc", Long.toString(pid), "stat"))
                .replaceAll("^.*\\) ", "").split(" ");
        // utime and stime (fields 14 and 15 of stat; 12 and 13 after the command), in clock ticks of 10 ms.
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10.0;
    }

    private static String loadAverage() throws Exception {
        return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    }

    private static void deleteRecursively(Path dir) throws Exception {
        try (var files = Files.walk(dir)) {
            for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
