package com.supermarket.loadclient.report;

import java.util.List;
import java.util.Locale;

import com.supermarket.loadclient.result.LatencySummary;
import com.supermarket.loadclient.result.RunResult;

/** Markdown table of several runs, one row each, sorted by label then stores. Stateless. */
final class ReportTable {

    private ReportTable() {
    }

    static String markdown(List<RunResult> runs) {
        StringBuilder table = new StringBuilder();
        table.append("| label | stores | mode | successful | failed | wall s | throughput req/s | successful req/s "
                + "| POST mean ms | median ms | p99 ms | p99.9 ms | max ms |\n");
        table.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (RunResult run : runs) {
            LatencySummary post = run.postLatency();
            table.append(String.format(Locale.ROOT,
                    "| %s | %d | %s | %,d | %,d | %.1f | %,.0f | %,.0f | %.1f | %.1f | %.1f | %.1f | %.1f |%n",
                    run.label(), run.parameters().maxStores(), run.mode(), run.successful(), run.failed(),
                    run.wallTimeSeconds(), run.throughput(), run.successThroughput(), post.meanMs(), post.medianMs(),
                    post.p99Ms(), post.p999Ms(), post.maxMs()));
        }
        return table.toString();
    }
}
