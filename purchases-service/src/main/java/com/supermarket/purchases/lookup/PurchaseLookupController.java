package com.supermarket.purchases.lookup;

import com.supermarket.purchases.storage.PurchaseRepository;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;

/**
 * Lets an operator (and the tests) check the system of record without a database shell:
 * {@code GET /purchases/count} and {@code GET /purchases/{purchaseId}}.
 */
@RestController
@RequestMapping("/purchases")
class PurchaseLookupController {

    private static final Logger log = LoggerFactory.getLogger(PurchaseLookupController.class);

    private final PurchaseRepository repository;

    PurchaseLookupController(PurchaseRepository repository) {
        this.repository = repository;
    }

    @GetMapping("/count")
    Map<String, Long> count() {
        return Map.of("count", repository.count());
    }

    @GetMapping("/{purchaseId}")
    ResponseEntity<?> find(@PathVariable UUID purchaseId) {
        return repository.findById(purchaseId)
                .<ResponseEntity<?>>map(ResponseEntity::ok)
                .orElseGet(() -> ResponseEntity.status(HttpStatus.NOT_FOUND)
                        .body(Map.of("message", "no purchase " + purchaseId + " is stored")));
    }

    @ExceptionHandler(MethodArgumentTypeMismatchException.class)
    ResponseEntity<Map<String, String>> badId(MethodArgumentTypeMismatchException e) {
        return ResponseEntity.badRequest().body(Map.of("message", "not a purchase id (a UUID): " + e.getValue()));
    }

    @ExceptionHandler(RuntimeException.class)
    ResponseEntity<Map<String, String>> storeUnavailable(RuntimeException e) {
        log.warn("Lookup failed: {}", e.toString());
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "5")
                .body(Map.of("message", "the purchase store is unavailable: " + e.getMessage()));
    }
}
