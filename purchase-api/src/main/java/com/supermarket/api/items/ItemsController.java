package com.supermarket.api.items;

import com.supermarket.api.web.DeferredAnswer;
import com.supermarket.contract.IdRanges;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.json.JsonMapper;

/**
 * The store queries: {@code GET /items/store/{storeID}} (top items at a store),
 * {@code GET /items/top10/{itemID}} with its alias {@code /items/top5/{itemID}} (top stores for
 * an item) and {@code GET /items/top} (the chain's top items, with the purchases counted),
 * answered by store-service over RPC. A query's answer is written by the thread that
 * receives the reply ({@link DeferredAnswer}); bad input is refused before anything is asked.
 * Thread-safe.
 */
@RestController
class ItemsController {

    private static final Logger log = LoggerFactory.getLogger(ItemsController.class);
    private static final Pattern INTEGER = Pattern.compile("[+-]?[0-9]{1,18}");

    /** Entries of {@code /items/store/{id}} without {@code ?limit}, as docs/api.md says. */
    static final int DEFAULT_ITEMS_AT_STORE = 10;
    /** Entries of {@code /items/top10/{id}} without {@code ?limit}, as docs/api.md says. */
    static final int DEFAULT_STORES_FOR_ITEM = 5;
    /** Entries of {@code /items/top} without {@code ?limit}, as docs/api.md says. */
    static final int DEFAULT_CHAIN_ITEMS = 10;

    private final StoreQueryClient client;
    private final IdRanges platform;
    private final JsonMapper json;

    ItemsController(StoreQueryClient client, IdRanges platform, JsonMapper json) {
        this.client = client;
        this.platform = platform;
        this.json = json;
    }

    record ItemCount(int itemID, long numberOfItems) {
    }

    record StoreCount(int storeID, long numberOfItems) {
    }

    record Ranking<T>(List<T> stores) {
    }

    /**
     * The chain's top items, and the purchases store-service has counted over every store (what
     * a reader samples over time for the purchases per minute).
     */
    record ChainRanking(List<ItemCount> items, long purchases) {
    }

    @GetMapping("/items/store/{storeID}")
    void topItemsAtStore(@PathVariable("storeID") String storeId, @RequestParam(name = "limit", required = false) String limit,
                         HttpServletRequest request, HttpServletResponse response) {
        int id = id("storeID", storeId, platform.maxStores(), "store");
        answer(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, id, limit(limit, DEFAULT_ITEMS_AT_STORE)),
                reply -> new Ranking<>(reply.entries().stream().map(ItemsController::itemCount).toList()), request, response);
    }

    @GetMapping({"/items/top10/{itemID}", "/items/top5/{itemID}"})
    void topStoresForItem(@PathVariable("itemID") String itemId, @RequestParam(name = "limit", required = false) String limit,
                          HttpServletRequest request, HttpServletResponse response) {
        int id = id("itemID", itemId, platform.maxItemId(), "item");
        answer(new StoreQuery(Kind.TOP_STORES_FOR_ITEM, id, limit(limit, DEFAULT_STORES_FOR_ITEM)),
                reply -> new Ranking<>(reply.entries().stream().map(entry -> new StoreCount(entry.id(), entry.quantity())).toList()),
                request, response);
    }

    @GetMapping("/items/top")
    void topItems(@RequestParam(name = "limit", required = false) String limit,
                  HttpServletRequest request, HttpServletResponse response) {
        answer(StoreQuery.topItems(limit(limit, DEFAULT_CHAIN_ITEMS)),
                reply -> new ChainRanking(reply.entries().stream().map(ItemsController::itemCount).toList(),
                        reply.purchases() == null ? 0 : reply.purchases()), request, response);
    }

    private static ItemCount itemCount(StoreQueryReply.Ranked entry) {
        return new ItemCount(entry.id(), entry.quantity());
    }

    /**
     * Asks {@code query} and answers the request from the thread that settles it (a query lane,
     * or the deadline's timer): the request's own thread does not wait for the reply
     * ({@link DeferredAnswer}). The client's deadline settles every query.
     */
    private void answer(StoreQuery query, Function<StoreQueryReply, Object> body,
                        HttpServletRequest request, HttpServletResponse response) {
        DeferredAnswer answer = new DeferredAnswer(request, response, json);
        client.query(query).whenComplete((reply, error) -> answer.send(() -> {
            if (error == null) {
                return answerOf(reply, body);
            }
            if (error instanceof StoreQueryFailedException failure) {
                return failed(failure);
            }
            // A bug: DeferredAnswer logs it, with this cause, and answers 500.
            throw new IllegalStateException("a store query failed unexpectedly", error);
        }));
    }

    private ResponseEntity<?> answerOf(StoreQueryReply reply, Function<StoreQueryReply, Object> body) {
        return switch (reply.status()) {
            case OK -> ResponseEntity.ok(body.apply(reply));
            case NOT_FOUND -> failed(new StoreQueryFailedException(404, orDefault(reply.message(), "not found")));
            case BAD_REQUEST -> failed(new StoreQueryFailedException(400, orDefault(reply.message(), "bad request")));
        };
    }

    private static int id(String name, String raw, int max, String what) {
        if (raw == null || !INTEGER.matcher(raw).matches()) {
            throw new StoreQueryFailedException(400, name + " '" + echo(raw) + "' is not an integer");
        }
        long value = Long.parseLong(raw);
        if (value < 1 || value > max) {
            throw new StoreQueryFailedException(404, "no " + what + " " + value + " (known: 1.." + max + ")");
        }
        return (int) value;
    }

    private int limit(String raw, int fallback) {
        if (raw == null) {
            return fallback;
        }
        if (!INTEGER.matcher(raw).matches()) {
            throw new StoreQueryFailedException(400, "limit '" + echo(raw) + "' is not an integer");
        }
        long value = Long.parseLong(raw);
        if (!StoreQuery.isValidLimit(value)) {
            throw new StoreQueryFailedException(400, "limit must be within 1.." + StoreQuery.MAX_LIMIT + ", not " + value);
        }
        return (int) value;
    }

    private static String orDefault(String message, String fallback) {
        return message == null || message.isBlank() ? fallback : message;
    }

    private static String echo(String raw) {
        return raw == null ? "" : raw.length() <= 40 ? raw : raw.substring(0, 40) + "...";
    }

    @ExceptionHandler(StoreQueryFailedException.class)
    ResponseEntity<Map<String, String>> failed(StoreQueryFailedException e) {
        if (e.status() >= 500) {
            log.warn("store query failed ({}): {}", e.status(), e.getMessage());
        }
        var response = ResponseEntity.status(e.status()).contentType(MediaType.APPLICATION_JSON);
        // Both are passing conditions: the broker or store-service may be back in a moment.
        if (e.status() == 503 || e.status() == 504) {
            response.header(HttpHeaders.RETRY_AFTER, "1");
        }
        return response.body(Map.of("message", e.getMessage()));
    }
}
