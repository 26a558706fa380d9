package com.supermarket.api.auth;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What till authentication adds to a POST: one {@link TillAuthenticator#decide} for a valid key of
 * the path's store, among 1,024 stores' keys (the table as the chart runs it). Run with
 * {@code -prof gc} to see the bytes allocated per decision.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TillAuthBenchmark {

    private static final int STORES = 1024;

    private Path file;
    private TillKeys keys;
    private TillAuthenticator authenticator;
    private String[] headers;
    private String[] stores;
    private int next;

    @Setup(Level.Trial)
    public void keys() throws IOException {
        StringBuilder hashes = new StringBuilder();
        headers = new String[STORES];
        stores = new String[STORES];
        for (int store = 1; store <= STORES; store++) {
            // the shape of a real key: tk_ + 44 base64url characters
            String key = "tk_" + String.format("%044d", store * 7919L).replace('0', 'Q');
            hashes.append(TillKeysTesting.line(Integer.toString(store), key));
            headers[store - 1] = "Bearer " + key;
            stores[store - 1] = Integer.toString(store);
        }
        file = Files.createTempFile("till-key-hashes", ".txt");
        Files.writeString(file, hashes);
        keys = new TillKeys(file);
        authenticator = new TillAuthenticator(keys, new SimpleMeterRegistry(), 10, System::currentTimeMillis);
    }

    @TearDown(Level.Trial)
    public void delete() throws IOException {
        keys.close();
        Files.deleteIfExists(file);
    }

    @Benchmark
    public AuthDecision validKeyOfThePathsStore() {
        int i = next++ & (STORES - 1);
        return authenticator.decide(Access.PURCHASE, stores[i], headers[i], "POST", "/purchase");
    }
}
