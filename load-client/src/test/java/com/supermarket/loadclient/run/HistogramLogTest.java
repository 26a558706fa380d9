package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.FileNotFoundException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RequestType;
import com.supermarket.loadclient.result.RunResult;

/** {@code --hlog}: the run's whole distribution, interval by interval, in HdrHistogram's own log format. */
class HistogramLogTest {

    @TempDir
    Path dir;

    @Test
    void theIntervalsOfEachTagAddUpToTheRunsDistributionOfThatRequestType() throws Exception {
        Path log = dir.resolve("run.hlog");
        try (StubApi api = new StubApi(request -> {
            Thread.sleep(request.index() % 10 == 0 ? 30 : 1);
            return request.method().equals("POST") ? 201 : 200;
        })) {
            RunResult result = Runs.quietly(Runs.settings(api.baseUrl(), Runs.profile(4, 10, 0.2, 0, 0, 1), log, false),
                    new RunStop());

            Map<String, Histogram> byTag = read(log);
            assertThat(byTag).containsOnlyKeys("POST", "GET_STORE", "GET_TOP10", HistogramLog.LOOP_LAG);
            for (RequestType type : RequestType.values()) {
                Histogram logged = byTag.get(type.csvName());
                LatencySummary summary = result.latencyOf(type);
                assertThat(logged.getTotalCount()).as(type.name()).isEqualTo(summary.count()).isPositive();
                assertThat(Math.min(logged.getValueAtPercentile(99.0), Math.round(summary.maxMs() * 1000)) / 1000.0)
                        .as(type + " p99").isEqualTo(summary.p99Ms());
                assertThat(logged.getMaxValue()).isGreaterThanOrEqualTo(Math.round(summary.maxMs() * 1000));
            }
            assertThat(byTag.get(HistogramLog.LOOP_LAG).getTotalCount()).isPositive();
            assertThat(Files.readString(log)).startsWith("#[load-client run 'test'").contains("#[StartTime: ")
                    .contains("Tag=POST,").contains("Tag=GET_TOP10,");
        }
    }

    /** The log read back with HdrHistogram's reader, every tag's intervals added up. */
    private static Map<String, Histogram> read(Path log) throws FileNotFoundException {
        Map<String, Histogram> byTag = new HashMap<>();
        HistogramLogReader reader = new HistogramLogReader(log.toFile());
        Map<RequestType, Integer> intervals = new EnumMap<>(RequestType.class);
        for (EncodableHistogram interval = reader.nextIntervalHistogram(); interval != null;
                interval = reader.nextIntervalHistogram()) {
            Histogram histogram = (Histogram) interval;
            byTag.computeIfAbsent(histogram.getTag(), tag -> new Histogram(3)).add(histogram);
            assertThat(histogram.getEndTimeStamp()).isGreaterThanOrEqualTo(histogram.getStartTimeStamp());
            for (RequestType type : RequestType.values()) {
                if (type.csvName().equals(histogram.getTag())) {
                    intervals.merge(type, 1, Integer::sum);
                }
            }
        }
        assertThat(intervals.values()).as("an interval per sample for every type sent").hasSize(3)
                .allSatisfy(count -> assertThat(count).isEqualTo(intervals.get(RequestType.POST)));
        return byTag;
    }
}
