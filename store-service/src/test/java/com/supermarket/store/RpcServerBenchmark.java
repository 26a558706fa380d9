package com.supermarket.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQueryReply;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Top-K queries per second through the RPC server alone (no purchase-api): the real application
 * in a throw-away vhost, {@code -Dbenchmark.callers} closed-loop callers (each on its own channel,
 * direct reply-to, half top-items-at-store, half top-stores-for-item) for
 * {@code -Dbenchmark.seconds}, once per RPC consumer count in {@code -Dbenchmark.rpcConsumers}
 * (comma-separated). Callers and server share this JVM and the machine: compare the rows of one
 * run. Not part of the build (no Test/IT suffix):
 * {@code ./mvnw -B -ntp -pl store-service -am test -Dtest=RpcServerBenchmark -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class RpcServerBenchmark {

    @Test
    void queriesPerSecondByRpcConsumerCount() throws Exception {
        int callers = Integer.getInteger("benchmark.callers", 64);
        int seconds = Integer.getInteger("benchmark.seconds", 15);
        List<String> rows = new ArrayList<>();
        for (String consumers : System.getProperty("benchmark.rpcConsumers", "2,4,8").split(",")) {
            try (TestBroker broker = TestBroker.create("rpc-bench");
                 ConfigurableApplicationContext service = start(broker, consumers.strip());
                 Connection connection = broker.newConnection()) {
                run(connection, callers, 3); // warm-up
                double rate = run(connection, callers, seconds);
                rows.add(String.format("rpc-consumers=%-3s callers=%d seconds=%d queries/s=%8.0f", consumers.strip(),
                        callers, seconds, rate));
                assertThat(rate).isPositive();
                assertThat(service.isActive()).isTrue();
            }
        }
        rows.forEach(System.out::println);
    }

    private static ConfigurableApplicationContext start(TestBroker broker, String rpcConsumers) {
        List<String> args = new ArrayList<>();
        broker.springProperties().forEach((name, value) -> args.add("--" + name + "=" + value));
        args.add("--server.port=0");
        args.add("--management.server.port=");
        args.add("--store.query.rpc-consumers=" + rpcConsumers);
        args.add("--logging.structured.format.console=");
        args.add("--logging.level.root=WARN");
        return new SpringApplicationBuilder(StoreServiceApplication.class).run(args.toArray(String[]::new));
    }

    private static double run(Connection connection, int callers, int seconds) throws Exception {
        LongAdder answered = new LongAdder();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long start = System.nanoTime();
        try (ExecutorService pool = Executors.newFixedThreadPool(callers)) {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                done.add(pool.submit(() -> {
                    try (RpcClient rpc = new RpcClient(connection)) {
                        ThreadLocalRandom random = ThreadLocalRandom.current();
                        while (System.nanoTime() < end) {
                            StoreQueryReply reply = random.nextBoolean()
                                    ? rpc.query(Kind.TOP_ITEMS_AT_STORE, random.nextInt(1, 257), 10)
                                    : rpc.query(Kind.TOP_STORES_FOR_ITEM, random.nextInt(1, 100_001), 5);
                            assertThat(reply.status()).isEqualTo(StoreQueryReply.Status.OK);
                            answered.increment();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get();
            }
        }
        return answered.sum() / ((System.nanoTime() - start) / 1e9);
    }
}
