package com.supermarket.loadclient.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RequestType;

class LatencyStatsTest {

    @Test
    void percentilesMatchABruteForceNearestRankOnTheRecordedLatencies() {
        SplittableRandom random = new SplittableRandom(7);
        int stores = 4;
        int perStore = 25_000;
        LoopMetrics[] metrics = new LoopMetrics[stores];
        long[] all = new long[stores * perStore];
        Histogram total = LatencyStats.newHistogram();
        for (int s = 0; s < stores; s++) {
            metrics[s] = new LoopMetrics();
            for (int i = 0; i < perStore; i++) {
                // Mostly a few ms, with a long tail up to seconds, like a loaded server.
                long micros = random.nextInt(100) == 0 ? 50_000 + random.nextLong(3_000_000)
                        : 500 + (long) (Math.exp(random.nextDouble() * 4) * 1000);
                metrics[s].recordSuccess(RequestType.POST, micros);
                all[s * perStore + i] = micros;
            }
            // Drained the way the sampler does it, several interval histograms merged.
            total.add(metrics[s].intervalHistogram(RequestType.POST));
        }
        long sum = Arrays.stream(all).sum();
        long max = Arrays.stream(all).max().orElseThrow();
        Arrays.sort(all);

        LatencySummary summary = LatencyStats.summarize(total, all.length, sum, max);

        assertThat(summary.count()).isEqualTo(all.length);
        assertThat(summary.meanMs()).isCloseTo(sum / (double) all.length / 1000.0, within(1e-9));
        assertThat(summary.maxMs()).isEqualTo(max / 1000.0);
        assertThat(summary.medianMs()).isEqualTo(expectedMs(total, all, 50.0, max));
        assertThat(summary.p90Ms()).isEqualTo(expectedMs(total, all, 90.0, max));
        assertThat(summary.p95Ms()).isEqualTo(expectedMs(total, all, 95.0, max));
        assertThat(summary.p99Ms()).isEqualTo(expectedMs(total, all, 99.0, max));
        assertThat(summary.p999Ms()).isEqualTo(expectedMs(total, all, 99.9, max));
        assertThat(summary.p9999Ms()).isEqualTo(expectedMs(total, all, 99.99, max));
        for (double p : new double[] { 50.0, 90.0, 95.0, 99.0, 99.9, 99.99 }) {
            long exact = nearestRank(all, p);
            // Within the histogram's 3 significant digits of the brute-force value, never below it.
            assertThat(LatencyStats.percentileMicros(total, p, max)).isBetween(exact, exact + exact / 1000 + 1);
        }
    }

    @Test
    void aSingleLatencyIsEveryPercentile() {
        LoopMetrics metrics = new LoopMetrics();
        metrics.recordSuccess(RequestType.POST, 123_456);
        Histogram total = metrics.intervalHistogram(RequestType.POST);

        LatencySummary summary = LatencyStats.summarize(total, 1, 123_456, 123_456);

        assertThat(summary.medianMs()).isEqualTo(123.456);
        assertThat(summary.p90Ms()).isEqualTo(123.456);
        assertThat(summary.p999Ms()).isEqualTo(123.456);
        assertThat(summary.p9999Ms()).isEqualTo(123.456);
        assertThat(summary.maxMs()).isEqualTo(123.456);
    }

    private static double expectedMs(Histogram histogram, long[] sorted, double percentile, long max) {
        return Math.min(histogram.highestEquivalentValue(nearestRank(sorted, percentile)), max) / 1000.0;
    }

    private static long nearestRank(long[] sorted, double percentile) {
        // Nearest rank ceil(p/100 * n); the epsilon keeps 99.9% of 100,000 at rank 99,900 despite binary fractions.
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.length - 1e-9);
        return sorted[Math.max(rank, 1) - 1];
    }
}
