package com.supermarket.api.purchase;

import com.supermarket.api.purchase.InvalidPurchaseException.Reason;
import com.supermarket.broker.PurchaseLogContext;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /purchase/{storeID}/customer/{custID}/date/{date}}: validates, publishes, and
 * answers {@code 201} only once the broker confirmed. The body is read raw, whatever the
 * Content-Type, because older clients send none or a wrong one. Thread-safe.
 */
@RestController
class PurchaseController {

    private static final Logger log = LoggerFactory.getLogger(PurchaseController.class);

    private final PurchaseRequestParser parser;
    private final PurchasePublisher publisher;
    private final PurchaseLimits limits;
    private final PublishProperties publishProperties;
    private final Counter accepted;
    private final Map<InvalidPurchaseException.Reason, Counter> rejectedByReason;
    private final Map<PublishRefusedException.Reason, Counter> refusedByReason;

    PurchaseController(PurchaseRequestParser parser, PurchasePublisher publisher, PurchaseLimits limits,
                       PublishProperties publishProperties, MeterRegistry registry) {
        this.parser = parser;
        this.publisher = publisher;
        this.limits = limits;
        this.publishProperties = publishProperties;
        this.accepted = Counter.builder("api.purchases.accepted")
                .description("Purchases the broker confirmed, answered 201").register(registry);
        this.rejectedByReason = counters(registry, "api.purchases.rejected", "Purchases refused as invalid, answered 400",
                InvalidPurchaseException.Reason.class);
        this.refusedByReason = counters(registry, "api.purchases.refused", "Purchases not accepted by the broker, answered 503",
                PublishRefusedException.Reason.class);
    }

    /** One counter per reason, built once: no meter lookup on the request path. */
    private static <R extends Enum<R>> Map<R, Counter> counters(MeterRegistry registry, String name, String description,
                                                               Class<R> reasons) {
        Map<R, Counter> counters = new EnumMap<>(reasons);
        for (R reason : reasons.getEnumConstants()) {
            counters.put(reason, Counter.builder(name).description(description).tag("reason", reason.name()).register(registry));
        }
        return counters;
    }

    /**
     * @param path the path's variables as one map; the {@code Idempotency-Key} header is read
     *             from the request. As four {@code String} arguments, resolved one by one through
     *             Spring's conversion service (a converter lookup keyed by their annotations),
     *             they took 4.0-4.7 % of the API's CPU (async-profiler, closed loop with GETs).
     */
    @PostMapping("/purchase/{storeID}/customer/{custID}/date/{date}")
    void purchase(@PathVariable Map<String, String> path, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        PurchaseRequest parsed = parser.parse(path.get("storeID"), path.get("custID"), path.get("date"), body(request),
                request.getHeader("Idempotency-Key"));
        publisher.publish(parsed);
        accepted.increment();
        if (log.isDebugEnabled()) {
            try (PurchaseLogContext ids = PurchaseLogContext.of(parsed.purchase())) {
                log.debug("Accepted purchase {} of store {}", parsed.purchase().purchaseId(), parsed.purchase().storeId());
            }
        }
        // Written directly, not as a ResponseEntity through the message converters: that path
        // (return value handlers, content negotiation, Jackson) was ~10% of the API's CPU per
        // purchase under JFR. The content type is fixed rather than negotiated: the purchase is
        // already accepted, so an odd Accept header must not turn the answer into a 406.
        byte[] created = ("{\"purchaseId\":\"" + parsed.purchase().purchaseId() + "\"}").getBytes(StandardCharsets.US_ASCII);
        response.setStatus(HttpStatus.CREATED.value());
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setContentLength(created.length);
        response.getOutputStream().write(created);
    }

    private byte[] body(HttpServletRequest request) throws IOException {
        int cap = limits.maxBodyBytes();
        long length = request.getContentLengthLong();
        if (length > cap) {
            throw tooLarge(length);
        }
        try (InputStream in = request.getInputStream()) {
            if (length >= 0) {
                // The container stops at the declared length; reading just that allocates the body once.
                return in.readNBytes((int) length);
            }
            // Read one byte past the cap: a chunked body declares no length.
            byte[] body = in.readNBytes(cap + 1);
            if (body.length > cap) {
                throw tooLarge(-1);
            }
            return body;
        }
    }

    private InvalidPurchaseException tooLarge(long length) {
        return new InvalidPurchaseException(Reason.BODY_SIZE, "the body is larger than "
                + limits.maxBodyBytes() + " bytes" + (length > 0 ? " (" + length + ")" : ""));
    }

    @ExceptionHandler(InvalidPurchaseException.class)
    ResponseEntity<Map<String, String>> rejected(InvalidPurchaseException e) {
        rejectedByReason.get(e.reason()).increment();
        log.debug("rejected purchase: {}", e.getMessage());
        return ResponseEntity.badRequest().contentType(MediaType.APPLICATION_JSON).body(Map.of("message", e.getMessage()));
    }

    @ExceptionHandler(IdempotencyConflictException.class)
    ResponseEntity<Map<String, String>> conflicting(IdempotencyConflictException e) {
        log.debug("refused purchase: {}", e.getMessage());
        return ResponseEntity.unprocessableContent().contentType(MediaType.APPLICATION_JSON).body(Map.of("message", e.getMessage()));
    }

    @ExceptionHandler(PublishRefusedException.class)
    ResponseEntity<Map<String, String>> refused(PublishRefusedException e) {
        refusedByReason.get(e.reason()).increment();
        // One line per refusal, no stack trace: during an outage every request is refused.
        log.warn("refused purchase ({}): {} [{}]", e.reason(), e.getMessage(), String.valueOf(e.getCause()));
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, Long.toString(publishProperties.retryAfterSeconds()))
                .contentType(MediaType.APPLICATION_JSON)
                .body(Map.of("message", e.getMessage()));
    }
}
