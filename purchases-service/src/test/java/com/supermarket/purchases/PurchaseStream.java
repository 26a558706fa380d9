package com.supermarket.purchases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.supermarket.broker.testing.TestBroker;
import com.supermarket.contract.Purchase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the tills send while a test breaks something: 10 random purchases published to the
 * broker every 100 ms until closed. Closing fails with what stopped the stream, if it stopped by
 * itself.
 */
final class PurchaseStream implements AutoCloseable {

    private final List<Purchase> published = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    private final ScheduledFuture<?> publishing;

    PurchaseStream(TestBroker broker) {
        publishing = executor.scheduleWithFixedDelay(() -> {
            List<Purchase> some = TestPurchases.random(10);
            TestPurchases.publish(broker, some);
            published.addAll(some);
        }, 0, 100, TimeUnit.MILLISECONDS);
    }

    /** How many purchases were published so far. */
    int size() {
        return published.size();
    }

    /** Every purchase published so far, in order. */
    List<Purchase> published() {
        return List.copyOf(published);
    }

    /** Waits until {@code more} purchases beyond those published so far are. */
    void awaitMore(int more, Duration patience) {
        int now = published.size();
        await("the stream goes on").atMost(patience).until(() -> published.size() >= now + more);
    }

    @Override
    public void close() throws Exception {
        try {
            if (publishing.isDone()) {
                publishing.get(); // rethrows what stopped the stream
            }
            publishing.cancel(false);
        } finally {
            executor.shutdown();
            assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
    }
}
