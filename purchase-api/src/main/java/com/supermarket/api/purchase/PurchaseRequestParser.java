package com.supermarket.api.purchase;

import com.supermarket.api.purchase.IdempotencyStore.Claim;
import com.supermarket.api.purchase.InvalidPurchaseException.Reason;
import com.supermarket.contract.IdRanges;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns the path values and the raw body of {@code POST /purchase/...} into a {@link Purchase},
 * or throws {@link InvalidPurchaseException} naming the first problem. Lenient where the
 * contract says so (ItemID as string or number, {@code numberOfItems} with or without the
 * trailing colon, counts as strings, unknown fields), strict everywhere else. Stateless and
 * thread-safe.
 */
@Component
final class PurchaseRequestParser {

    static final String COUNT_KEY = "numberOfItems";
    /** The key as clients generated from the published spec spell it. */
    static final String COUNT_KEY_WITH_COLON = "numberOfItems:";

    private static final Pattern INTEGER = Pattern.compile("[+-]?[0-9]{1,19}");
    private static final Pattern DATE = Pattern.compile("[0-9]{8}");
    private static final int ECHO_LIMIT = 40;
    static final int MAX_IDEMPOTENCY_KEY_LENGTH = 128;

    private final JsonMapper json = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private final IdRanges platform;
    private final PurchaseLimits limits;
    private final Clock clock;

    @Autowired
    PurchaseRequestParser(IdRanges platform, PurchaseLimits limits) {
        this(platform, limits, Clock.systemUTC());
    }

    PurchaseRequestParser(IdRanges platform, PurchaseLimits limits, Clock clock) {
        this.platform = platform;
        this.limits = limits;
        this.clock = clock;
    }

    PurchaseRequest parse(String storeId, String customerId, String date, byte[] body) {
        return parse(storeId, customerId, date, body, null);
    }

    /**
     * @param idempotencyKey the client's {@code Idempotency-Key} header, or null. Without a key the
     *                       purchase id is new and time-ordered. With one, the key names the
     *                       purchase at its store, and the purchase id is derived from (store,
     *                       key, what the purchase says): a till that retries after a 503 or a
     *                       lost answer re-sends the same id, which the consumers store and count
     *                       once, while a reused key with another body is another purchase, with
     *                       an id of its own, even once the idempotency store has forgotten the
     *                       key (or where none is configured).
     */
    PurchaseRequest parse(String storeId, String customerId, String date, byte[] body, String idempotencyKey) {
        int store = storeId(storeId);
        int customer = customerId(customerId);
        LocalDate day = date(date);
        List<PurchaseItem> items = items(body);
        Instant acceptedAt = clock.instant();
        if (idempotencyKey == null) {
            return PurchaseRequest.unkeyed(
                    new Purchase(TimeOrderedIds.at(acceptedAt.toEpochMilli()), store, customer, day, items, acceptedAt));
        }
        UUID key = keyId(store, idempotencyKey);
        String fingerprint = PurchaseFingerprint.of(store, customer, day, items);
        UUID purchaseId = nameBased("store " + store + " idempotency-key " + idempotencyKey + " purchase " + fingerprint);
        return new PurchaseRequest(new Purchase(purchaseId, store, customer, day, items, acceptedAt),
                new Claim(key, fingerprint));
    }

    /** The idempotency store's id of a key: scoped by store, as two stores' tills may number their receipts alike. */
    static UUID keyId(int store, String idempotencyKey) {
        if (idempotencyKey.isEmpty() || idempotencyKey.length() > MAX_IDEMPOTENCY_KEY_LENGTH
                || !idempotencyKey.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new InvalidPurchaseException(Reason.IDEMPOTENCY_KEY, "the Idempotency-Key header must be 1.."
                    + MAX_IDEMPOTENCY_KEY_LENGTH + " visible ASCII characters");
        }
        return nameBased("store " + store + " idempotency-key " + idempotencyKey);
    }

    private static UUID nameBased(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.US_ASCII));
    }

    private int storeId(String raw) {
        Long value = integer(raw);
        if (value == null) {
            throw new InvalidPurchaseException(Reason.STORE, "storeID '" + echo(raw) + "' is not an integer");
        }
        if (!platform.isKnownStore(value)) {
            throw new InvalidPurchaseException(Reason.STORE,
                    "storeID " + value + " is not a known store (1.." + platform.maxStores() + ")");
        }
        return value.intValue();
    }

    private static int customerId(String raw) {
        Long value = integer(raw);
        if (value == null || value != value.intValue()) {
            throw new InvalidPurchaseException(Reason.CUSTOMER, "custID '" + echo(raw) + "' is not a 32-bit integer");
        }
        return value.intValue();
    }

    private static LocalDate date(String raw) {
        if (raw == null || !DATE.matcher(raw).matches()) {
            throw new InvalidPurchaseException(Reason.DATE, "date '" + echo(raw) + "' is not in the form yyyyMMdd");
        }
        try {
            // Not a DateTimeFormatter: its parse was ~3 % of the API's CPU under JFR.
            return LocalDate.of(Integer.parseInt(raw, 0, 4, 10), Integer.parseInt(raw, 4, 6, 10),
                    Integer.parseInt(raw, 6, 8, 10));
        } catch (DateTimeException e) {
            throw new InvalidPurchaseException(Reason.DATE, "date '" + raw + "' is not a real calendar date (yyyyMMdd)");
        }
    }

    private List<PurchaseItem> items(byte[] body) {
        JsonNode root = tree(body);
        if (!root.isObject()) {
            throw new InvalidPurchaseException(Reason.MALFORMED_JSON,
                    "the body must be a JSON object like {\"items\":[...]}, not " + describe(root));
        }
        JsonNode items = root.get("items");
        if (items == null || items.isNull()) {
            throw new InvalidPurchaseException(Reason.ITEMS, "items is missing");
        }
        if (!items.isArray()) {
            throw new InvalidPurchaseException(Reason.ITEMS, "items must be an array, not " + describe(items));
        }
        if (items.isEmpty()) {
            throw new InvalidPurchaseException(Reason.ITEMS, "items must not be empty");
        }
        if (items.size() > limits.maxItems()) {
            throw new InvalidPurchaseException(Reason.ITEMS,
                    "items has " + items.size() + " entries; at most " + limits.maxItems() + " are allowed");
        }
        List<PurchaseItem> parsed = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            parsed.add(item(items.get(i), "items[" + i + "]"));
        }
        return parsed;
    }

    private JsonNode tree(byte[] body) {
        if (body == null || body.length == 0) {
            throw new InvalidPurchaseException(Reason.MALFORMED_JSON, "the body is empty; expected {\"items\":[...]}");
        }
        try {
            JsonNode root = json.readTree(body);
            if (root == null || root.isMissingNode()) {
                throw new InvalidPurchaseException(Reason.MALFORMED_JSON, "the body holds no JSON value");
            }
            return root;
        } catch (JacksonException e) {
            // Jackson's own message names line and column; its first line is enough for a client.
            String detail = String.valueOf(e.getOriginalMessage()).lines().findFirst().orElse("");
            throw new InvalidPurchaseException(Reason.MALFORMED_JSON, "the body is not valid JSON: " + echo(detail, 200));
        }
    }

    private PurchaseItem item(JsonNode item, String where) {
        if (!item.isObject()) {
            throw new InvalidPurchaseException(Reason.ITEMS, where + " must be an object, not " + describe(item));
        }
        JsonNode idNode = item.get("ItemID");
        if (idNode == null || idNode.isNull()) {
            throw new InvalidPurchaseException(Reason.ITEM_ID, where + ".ItemID is missing");
        }
        Long id = integer(idNode);
        if (id == null) {
            throw new InvalidPurchaseException(Reason.ITEM_ID,
                    where + ".ItemID must be an integer (a JSON number or a string holding one), not " + describe(idNode));
        }
        if (!platform.isKnownItem(id)) {
            throw new InvalidPurchaseException(Reason.ITEM_ID,
                    where + ".ItemID " + id + " is out of range 1.." + platform.maxItemId());
        }
        return new PurchaseItem(id.intValue(), quantity(item, where));
    }

    private static int quantity(JsonNode item, String where) {
        JsonNode plain = item.get(COUNT_KEY);
        JsonNode colon = item.get(COUNT_KEY_WITH_COLON);
        if ((plain == null || plain.isNull()) && (colon == null || colon.isNull())) {
            throw new InvalidPurchaseException(Reason.QUANTITY, where + ".numberOfItems is missing");
        }
        Long count = plain != null && !plain.isNull() ? integer(plain) : integer(colon);
        if (plain != null && !plain.isNull() && colon != null && !colon.isNull()
                && (count == null || !count.equals(integer(colon)))) {
            throw new InvalidPurchaseException(Reason.QUANTITY,
                    where + " has both numberOfItems and numberOfItems: with different values");
        }
        if (count == null) {
            JsonNode given = plain != null && !plain.isNull() ? plain : colon;
            throw new InvalidPurchaseException(Reason.QUANTITY,
                    where + ".numberOfItems must be an integer (a JSON number or a string holding one), not " + describe(given));
        }
        if (count < 1 || count > Integer.MAX_VALUE) {
            throw new InvalidPurchaseException(Reason.QUANTITY,
                    where + ".numberOfItems must be a positive integer, not " + count);
        }
        return count.intValue();
    }

    /** An integral JSON number, or a string holding a decimal integer; null otherwise. */
    private static Long integer(JsonNode node) {
        if (node.isTextual()) {
            return integer(node.asString());
        }
        if (node.isIntegralNumber() && node.canConvertToLong()) {
            return node.longValue();
        }
        return null;
    }

    private static Long integer(String raw) {
        if (raw == null || !INTEGER.matcher(raw).matches()) {
            return null;
        }
        try {
            return Long.parseLong(raw);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String describe(JsonNode node) {
        return switch (node.getNodeType()) {
            case OBJECT -> "an object";
            case ARRAY -> "an array";
            case NULL -> "null";
            case STRING -> "the string \"" + echo(node.asString()) + "\"";
            default -> echo(node.toString());
        };
    }

    private static String echo(String raw) {
        return echo(raw, ECHO_LIMIT);
    }

    private static String echo(String raw, int limit) {
        if (raw == null) {
            return "";
        }
        return raw.length() <= limit ? raw : raw.substring(0, limit) + "...";
    }
}
