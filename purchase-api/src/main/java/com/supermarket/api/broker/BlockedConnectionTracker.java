package com.supermarket.api.broker;

import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionBlockedEvent;
import org.springframework.amqp.rabbit.connection.ConnectionUnblockedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Whether the broker currently blocks this application's connection (a memory or disk alarm):
 * publishers refuse fast while it does and readiness is DOWN. Thread-safe: one atomic
 * reference, written by the connection's thread and read by request threads.
 */
@Component
public class BlockedConnectionTracker {

    private static final Logger log = LoggerFactory.getLogger(BlockedConnectionTracker.class);

    /** The broker's reason while blocked, null while not. */
    private final AtomicReference<String> blockedReason = new AtomicReference<>();

    public boolean isBlocked() {
        return blockedReason.get() != null;
    }

    /** The broker's reason for the block, or null when not blocked. */
    public String reason() {
        return blockedReason.get();
    }

    @EventListener
    public void blocked(ConnectionBlockedEvent event) {
        blockedReason.set(event.getReason() == null ? "blocked" : event.getReason());
        log.warn("broker blocked the connection: {}", event.getReason());
    }

    @EventListener
    public void unblocked(ConnectionUnblockedEvent event) {
        cleared("broker unblocked the connection");
    }

    /** A new connection starts unblocked; the broker blocks it again if the alarm persists. */
    void connectionClosed() {
        cleared("connection closed while blocked");
    }

    private void cleared(String why) {
        if (blockedReason.getAndSet(null) != null) {
            log.info(why);
        }
    }
}
