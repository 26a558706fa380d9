package com.supermarket.broker;

import com.supermarket.contract.Purchase;
import org.slf4j.MDC;

/**
 * One purchase's ids in the logging context (MDC) for the lines logged about it:
 * {@code purchaseId}, {@code storeId}, and, when it carries a {@link Purchase#traceparent()},
 * {@code traceId} and {@code spanId} of the request that accepted it, so its lines in every
 * service share that request's trace id. Closing restores what the MDC held before (a message's
 * handling span, say).
 *
 * <p>Meant for lines actually logged (a parked purchase, or a debug line behind
 * {@code isDebugEnabled()}): each open copies the MDC's map. Not thread-safe: open and close it
 * on one thread, like the MDC it changes.
 */
public final class PurchaseLogContext implements AutoCloseable {

    public static final String PURCHASE_ID = "purchaseId";
    public static final String STORE_ID = "storeId";
    public static final String TRACE_ID = "traceId";
    public static final String SPAN_ID = "spanId";

    private final String previousTraceId;
    private final String previousSpanId;
    private final boolean traced;

    private PurchaseLogContext(Purchase purchase) {
        MDC.put(PURCHASE_ID, purchase.purchaseId().toString());
        MDC.put(STORE_ID, Integer.toString(purchase.storeId()));
        traced = purchase.traceparent() != null;
        previousTraceId = traced ? MDC.get(TRACE_ID) : null;
        previousSpanId = traced ? MDC.get(SPAN_ID) : null;
        if (traced) {
            MDC.put(TRACE_ID, purchase.traceparent().substring(3, 35));
            MDC.put(SPAN_ID, purchase.traceparent().substring(36, 52));
        }
    }

    /** Puts {@code purchase}'s ids in the MDC until {@link #close}. */
    public static PurchaseLogContext of(Purchase purchase) {
        return new PurchaseLogContext(purchase);
    }

    @Override
    public void close() {
        MDC.remove(PURCHASE_ID);
        MDC.remove(STORE_ID);
        if (traced) {
            restore(TRACE_ID, previousTraceId);
            restore(SPAN_ID, previousSpanId);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
