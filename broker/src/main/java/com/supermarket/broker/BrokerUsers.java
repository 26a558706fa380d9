package com.supermarket.broker;

import com.supermarket.contract.Topology;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The broker user of each service and the rights it holds in the platform's vhost: the one
 * source of truth for the deployment files (compose definitions, the chart's {@code Permission}
 * resources) and the test that checks each user can do its job and nothing else.
 *
 * <p>RabbitMQ checks three regular expressions per user and vhost against resource names:
 * <em>configure</em> (declare, delete), <em>write</em> (publish to an exchange, bind to a queue)
 * and <em>read</em> (consume or get from a queue, purge it, bind from an exchange). No service has
 * configure rights: the deployment declares the topology and the policies once, as an
 * administrator the services never hold, and each service runs with
 * {@code platform.broker.declare=false}, checking passively (which needs no right) that the
 * queues exist. The default exchange is named {@code amq.default} in these checks; write on it
 * reaches every queue by name, which AMQP 0-9-1 permissions cannot narrow, so it is granted only
 * where direct reply-to needs it (the RPC request and its reply). Topic permissions do not apply:
 * the platform has no topic exchange.
 *
 * <p>Tags: {@code management} is the least tag that lets a user call the management API, and
 * lists the queues of the vhosts it has any permission in; purchase-api (the routing check) and
 * the consumers (shard discovery) need it in the {@code sharded} topology mode only.
 * {@code policymaker} (to set policies) is held by no service. Immutable.
 *
 * @param name      the default user name (each deployment may choose another)
 * @param tags      the user's tags
 * @param configure what it may declare or delete
 * @param write     the exchanges it may publish to
 * @param read      the queues it may consume
 */
public record BrokerUsers(String name, String tags, String configure, String write, String read) {

    /** Matches no resource name (RabbitMQ reads an empty pattern the same way). */
    public static final String NOTHING = "^$";

    /** The management API tag the services need for queue listing (sharded mode). */
    public static final String MANAGEMENT_TAG = "management";

    /**
     * purchase-api: publishes purchase batches to the ingress fanout and store queries to the RPC
     * queue through the default exchange, and receives the replies on direct reply-to (a
     * pseudo-queue that needs no read right).
     */
    public static final BrokerUsers PURCHASE_API = new BrokerUsers("purchase-api", MANAGEMENT_TAG, NOTHING,
            "^(" + quote(Topology.INGRESS_EXCHANGE) + "|amq\\.default)$", NOTHING);

    /** The copy suffix of a store exchange, as a pattern: none (copy 0) or {@code .c<n>} (copy n >= 1). */
    private static final String STORE_COPY_SUFFIX = "(\\.c[0-9]+)?";

    /**
     * store-service: consumes the shard queues of its copy group's exchange ({@code storeX} for
     * copy 0, {@code storeX.c<n>} for copy n) and the query queue of every store partition
     * ({@link Topology#storeQueryQueue}), replies through the default exchange (direct reply-to),
     * parks a poison purchase in the dead-letter exchange.
     */
    public static final BrokerUsers STORE_SERVICE = new BrokerUsers("store-service", MANAGEMENT_TAG, NOTHING,
            "^(" + quote(Topology.DEAD_LETTER_EXCHANGE) + "|amq\\.default)$",
            "^(" + shardQueues(quote(Topology.STORE_EXCHANGE) + STORE_COPY_SUFFIX) + "|"
                    + quote(Topology.STORE_RPC_QUEUE) + "(\\.p[0-9]+)?)$");

    /**
     * purchases-service: consumes the {@code purchaseX} shard queues and parks a poison purchase
     * in the dead-letter exchange.
     */
    public static final BrokerUsers PURCHASES_SERVICE = new BrokerUsers("purchases-service", MANAGEMENT_TAG, NOTHING,
            "^" + quote(Topology.DEAD_LETTER_EXCHANGE) + "$", "^(" + shardQueues(quote(Topology.PURCHASE_EXCHANGE)) + ")$");

    /**
     * The deployment's set-up user, which declares the topology and the policies (the chart's
     * operator-made default user, compose's {@code rabbitmqctl}, the tests): every right. No
     * service runs as it, and it is not one of {@link #ALL}.
     */
    public static final BrokerUsers ADMINISTRATOR = new BrokerUsers("administrator", "administrator", ".*", ".*", ".*");

    /** Every service's user. */
    public static final List<BrokerUsers> ALL = List.of(PURCHASE_API, STORE_SERVICE, PURCHASES_SERVICE);

    /** Whether this user may read (consume, get, purge) the queue {@code queue}. */
    public boolean mayRead(String queue) {
        return Pattern.compile(read).matcher(queue).find();
    }

    /** Whether this user may write to (publish to) the exchange {@code exchange}. */
    public boolean mayWrite(String exchange) {
        return Pattern.compile(write).matcher(exchange).find();
    }

    /**
     * The shard queues of the exchanges {@code exchangePattern} matches (a quoted name, or a
     * pattern of names) in either topology mode, as an unanchored alternation.
     */
    private static String shardQueues(String exchangePattern) {
        String marker = "EXCHANGE";
        return quote(Topology.replicatedShardName(marker, 0)).replaceAll("0$", "[0-9]+").replace(marker, exchangePattern)
                + "|" + quote(Topology.shardQueuePrefix(marker)).replace(marker, exchangePattern) + ".+";
    }

    private static String quote(String name) {
        return name.replace(".", "\\.");
    }
}
