package com.supermarket.store.durability;

import com.rabbitmq.client.Channel;
import com.supermarket.contract.Purchase;
import java.io.IOException;
import java.util.List;

/**
 * Acknowledges a delivered message once the purchases it carried are counted durably, so that
 * after any crash the counts hold exactly the acknowledged purchases plus some unacknowledged
 * ones that the broker redelivers and the dedup window then skips.
 *
 * <p>Implementations are thread-safe; each consumer calls from its own channel's thread, in
 * delivery order.
 */
public interface Acknowledger {

    /**
     * Called after {@code counted} (every purchase of the message that was applied or skipped as
     * a duplicate) went through the counts; acknowledges {@code deliveryTag} on {@code channel}
     * (the one the delivery came on, {@code ShardConsumers.onDeliveringChannel}) now or once that
     * is durable.
     */
    void acknowledge(Channel channel, long deliveryTag, List<Purchase> counted) throws IOException;
}
