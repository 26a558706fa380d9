package com.supermarket.store.partition;

import com.supermarket.contract.Topology;

/**
 * Which copy of its store partition this instance is: every copy group {@code 0..copies-1}
 * consumes its own sharded exchange ({@link Topology#storeExchange(int)}), fed by the ingress
 * fanout, so each copy counts every purchase of the partition on its own; the copies of a
 * partition share its query queue. Immutable.
 *
 * @param index  this copy, 0..copies-1
 * @param copies how many copies of every partition run ({@code STORE_COPIES})
 */
public record StoreCopy(int index, int copies) {

    public StoreCopy {
        if (copies < 1 || index < 0 || index >= copies) {
            throw new IllegalArgumentException("a store copy must be within 0.." + (copies - 1) + " of " + copies
                    + " cop(ies) (STORE_PARTITION_COPY, STORE_COPIES): " + index);
        }
    }

    /** The sharded exchange whose shard queues this copy consumes. */
    public String exchange() {
        return Topology.storeExchange(index);
    }

    @Override
    public String toString() {
        return "copy " + index + " of " + copies;
    }
}
