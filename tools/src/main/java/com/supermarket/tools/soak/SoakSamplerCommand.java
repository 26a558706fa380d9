package com.supermarket.tools.soak;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

import com.supermarket.tools.Scrape;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code soak-sampler}: scripts/soak.sh's sampler, a row of samples.csv every --every seconds until killed. Not thread-safe. */
@Command(name = "soak-sampler", mixinStandardHelpOptions = true, sortOptions = false,
        description = { "scripts/soak.sh's sampler: a row of samples.csv every --every seconds.",
                "Writes the header and then, every --every seconds from --start until killed, a row of the soak's",
                "samples (what soak-report reads): purchases accepted, heaps, write-ahead log and snapshot, Redis, queued",
                "messages, CPU ms per purchase of each --cpu process; and a line per row on standard error." })
public final class SoakSamplerCommand implements Callable<Integer> {

    @Option(names = "--samples", required = true, description = "The CSV to write (replaced).")
    private Path samples;

    @Option(names = "--pids", required = true, description = "\"NAME PID\" a line, the processes to watch; read at every row.")
    private Path pids;

    @Option(names = "--faults", required = true, description = "\"SECONDS FAULT\" a line, appended as faults strike.")
    private Path faults;

    @Option(names = "--start", required = true, description = "The run's start, epoch seconds (date +%%s.%%N).")
    private double start;

    @Option(names = "--every", description = "Seconds between rows.")
    private double every = 15;

    @Option(names = "--management-port", required = true, arity = "3", paramLabel = "PORT",
            description = "purchase-api's, store-service's and purchases-service's management ports.")
    private List<Integer> managementPorts;

    @Option(names = "--redis-port", required = true)
    private int redisPort;

    @Option(names = "--rabbitmq-url", description = "The management API.")
    private String rabbitmqUrl = "http://127.0.0.1:15672";

    @Option(names = "--vhost", required = true)
    private String vhost;

    @Option(names = "--store-state", required = true, description = "store-service's state directory.")
    private Path storeState;

    @Option(names = "--cpu", paramLabel = "NAME", description = "A process of --pids whose CPU is sampled; repeatable, in column order.")
    private List<String> cpuNames = List.of();

    @Option(names = "--clock-ticks", description = "Clock ticks per second (getconf CLK_TCK).")
    private double clockTicks = 100;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Override
    public Integer call() throws Exception {
        SoakSampler sampler = new SoakSampler(new LiveSources(), cpuNames, clockTicks);
        Files.writeString(samples, sampler.header() + "\n");
        for (long tick = 1; ; tick++) {
            long wait = Math.round((start + tick * every) * 1000) - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            } else {
                // late (a slow start, a stalled machine): this row now, the next on the schedule
                tick = (long) Math.floor((System.currentTimeMillis() / 1000.0 - start) / every);
            }
            List<String> row = sampler.row(System.currentTimeMillis() / 1000.0 - start);
            try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(samples, StandardOpenOption.APPEND))) {
                out.println(String.join(",", row));
            }
            System.err.println("[soak] " + SoakSampler.describe(row));
        }
    }

    private String get(String url, String credentials) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5));
        if (credentials != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
        }
        return Scrape.body(http, request.build());
    }

    /** The machine's services, files and processes. */
    private final class LiveSources implements SoakSampler.Sources {

        @Override
        public String scrape(String service) {
            int port = managementPorts.get(SoakSampler.SERVICES.indexOf(service));
            return get("http://127.0.0.1:" + port + "/actuator/prometheus", null);
        }

        @Override
        public String queues() {
            return get(rabbitmqUrl + "/api/queues/" + URLEncoder.encode(vhost, StandardCharsets.UTF_8).replace("+", "%20")
                    + "?columns=name,messages", "guest:guest");
        }

        @Override
        public OptionalLong[] redis() {
            return RedisInfo.read(redisPort);
        }

        @Override
        public Map<String, Long> pids() {
            Map<String, Long> byName = new HashMap<>();
            for (String line : lines(pids)) {
                String[] words = line.strip().split("\\s+");
                if (words.length == 2 && words[1].matches("[0-9]+")) {
                    byName.put(words[0], Long.parseLong(words[1]));
                }
            }
            return byName;
        }

        @Override
        public List<String> faultLines() {
            return lines(faults);
        }

        @Override
        public OptionalLong cpuTicks(long pid) {
            return ProcStat.cpuTicks(Path.of("/proc"), pid);
        }

        @Override
        public long walBytes() {
            return files("log-", ".wal").mapToLong(SoakSamplerCommand::size).sum();
        }

        @Override
        public OptionalLong newestSnapshotBytes() {
            return files("snapshot-", ".snap").max(Comparator.comparing(p -> p.getFileName().toString()))
                    .map(p -> OptionalLong.of(size(p))).orElse(OptionalLong.empty());
        }

        private Stream<Path> files(String prefix, String suffix) {
            try (Stream<Path> listed = Files.list(storeState)) {
                return listed.filter(p -> p.getFileName().toString().startsWith(prefix) && p.getFileName().toString().endsWith(suffix))
                        .toList().stream();
            } catch (IOException e) {
                return Stream.empty();
            }
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            return List.of();
        }
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }
}
