package com.supermarket.tools.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.junit.jupiter.api.Test;

class SoakSamplerTest {

    /** Sources a test sets between rows. */
    private static final class FakeSources implements SoakSampler.Sources {
        final Map<String, String> scrapes = new HashMap<>();
        final Map<String, Long> pids = new HashMap<>();
        final Map<Long, Long> ticks = new HashMap<>();
        final List<String> faults = new ArrayList<>();
        String queues = "";
        OptionalLong redisUsed = OptionalLong.empty();
        OptionalLong redisKeys = OptionalLong.empty();
        long wal;
        OptionalLong snapshot = OptionalLong.empty();

        @Override
        public String scrape(String service) {
            return scrapes.getOrDefault(service, "");
        }

        @Override
        public String queues() {
            return queues;
        }

        @Override
        public OptionalLong[] redis() {
            return new OptionalLong[] { redisUsed, redisKeys };
        }

        @Override
        public Map<String, Long> pids() {
            return Map.copyOf(pids);
        }

        @Override
        public List<String> faultLines() {
            return List.copyOf(faults);
        }

        @Override
        public OptionalLong cpuTicks(long pid) {
            Long t = ticks.get(pid);
            return t == null ? OptionalLong.empty() : OptionalLong.of(t);
        }

        @Override
        public long walBytes() {
            return wal;
        }

        @Override
        public OptionalLong newestSnapshotBytes() {
            return snapshot;
        }
    }

    private final FakeSources sources = new FakeSources();
    private final SoakSampler sampler = new SoakSampler(sources, List.of("purchase-api", "mariadbd"), 100);

    private void accepted(long count) {
        sources.scrapes.put("purchase-api", "api_purchases_accepted_total " + count + ".0\n"
                + "jvm_memory_used_bytes{area=\"heap\",id=\"eden\"} 1048576\n"
                + "jvm_memory_used_bytes{area=\"heap\",id=\"old\"} 2097152\n"
                + "jvm_memory_used_bytes{area=\"nonheap\",id=\"meta\"} 999\n"
                + "jvm_gc_live_data_size_bytes 0.0\n");
    }

    @Test
    void theHeaderIsWhatSoakReportReads() {
        assertThat(sampler.header()).isEqualTo("t_s,fault,accepted,accepted_per_s,purchase-api_heap_used_bytes,"
                + "purchase-api_heap_live_bytes,store-service_heap_used_bytes,store-service_heap_live_bytes,"
                + "purchases-service_heap_used_bytes,purchases-service_heap_live_bytes,store_wal_bytes,store_snapshot_bytes,"
                + "redis_used_bytes,redis_keys,queue_messages,cpu_ms_per_purchase_purchase-api,cpu_ms_per_purchase_mariadbd");
    }

    @Test
    void aRowFromEverySource() {
        sources.pids.put("purchase-api", 10L);
        sources.pids.put("mariadbd", 20L);
        sources.ticks.put(10L, 100L);
        sources.ticks.put(20L, 50L);
        accepted(1000);
        sources.scrapes.put("store-service", "jvm_memory_used_bytes{area=\"heap\"} 5.0E6\njvm_gc_live_data_size_bytes 4.0E6\n");
        sources.queues = "[{\"name\":\"a\",\"messages\":3},{\"name\":\"b\",\"messages\":4}]";
        sources.redisUsed = OptionalLong.of(123456);
        sources.redisKeys = OptionalLong.of(77);
        sources.wal = 4096;
        sources.snapshot = OptionalLong.of(2048);

        List<String> first = sampler.row(10.04);

        assertThat(first).containsExactly("10.0", "", "1000", "100", "3145728", "", "5000000", "4000000", "", "",
                "4096", "2048", "123456", "77", "7", "", "");

        sources.ticks.put(10L, 300L);
        sources.ticks.put(20L, 60L);
        accepted(1500);
        sources.faults.add("12 broker-cut");
        List<String> second = sampler.row(20.0);

        assertThat(second.subList(0, 4)).containsExactly("20.0", "broker-cut@12", "1500", "50");
        assertThat(second.subList(15, 17)).as("CPU ms per purchase since the last row")
                .containsExactly("4.0000", "0.2000");
        assertThat(SoakSampler.describe(second)).startsWith("t    20s accepted      1500 (   50/s) heap MiB api    3 store    5")
                .endsWith(" | fault broker-cut@12");
    }

    @Test
    void aRestartedApiCountsFromZeroAndItsCpuFromItsStart() {
        sources.pids.put("purchase-api", 10L);
        sources.ticks.put(10L, 1000L);
        accepted(1000);
        sampler.row(10);

        sources.pids.put("purchase-api", 11L);
        sources.ticks.put(11L, 40L);
        accepted(200);
        List<String> row = sampler.row(20);

        assertThat(row.get(2)).as("accepted in all").isEqualTo("1200");
        assertThat(row.get(3)).isEqualTo("20");
        assertThat(row.get(15)).as("the new process's 40 ticks over 200 purchases").isEqualTo("2.0000");
    }

    @Test
    void aCounterBelowTheLastOneUnderTheSamePidIsARestartToo() {
        sources.pids.put("purchase-api", 10L);
        accepted(1000);
        sampler.row(10);
        accepted(300);

        assertThat(sampler.row(20).get(2)).isEqualTo("1300");
    }

    @Test
    void sourcesThatDoNotAnswerLeaveEmptyCells() {
        sources.faults.add("5 redis-cut");
        sources.faults.add("6 db-cut");
        sources.faults.add("garbage");

        List<String> row = sampler.row(10);

        assertThat(row).containsExactly("10.0", "redis-cut@5+db-cut@6", "0", "", "", "", "", "", "", "", "0", "", "", "", "", "",
                "");
        assertThat(sampler.row(20).get(1)).as("each fault once").isEmpty();
        assertThat(SoakSampler.describe(row)).contains("accepted         0 (     /s)");
    }
}
