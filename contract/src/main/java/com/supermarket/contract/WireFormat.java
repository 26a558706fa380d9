package com.supermarket.contract;

import java.nio.charset.StandardCharsets;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON encoding of the contract records, shared by every producer and consumer so that they
 * agree byte for byte. Dates are ISO-8601 strings, unknown properties are ignored (a newer
 * producer may add fields). Thread-safe: the mapper is immutable once built.
 */
public final class WireFormat {

    /** The content type set on every message the platform publishes. */
    public static final String CONTENT_TYPE = "application/json";

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .build();

    private WireFormat() {
    }

    public static byte[] encode(Object value) {
        return MAPPER.writeValueAsBytes(value);
    }

    /**
     * Encodes a purchase to the same bytes as {@link #encode(Object)}, without the data binder:
     * purchase-api encodes every purchase on its request path, where the binder was about 5 % of
     * the API's CPU under JFR. Every field is a number, a UUID or an ISO-8601 date or instant
     * (the binder's formats: {@code LocalDate} and {@code Instant} print them alike), or a
     * validated traceparent (left out when null, as the binder leaves it out), so nothing needs
     * escaping.
     */
    public static byte[] encode(Purchase purchase) {
        StringBuilder json = new StringBuilder(128 + 32 * purchase.items().size())
                .append("{\"purchaseId\":\"").append(purchase.purchaseId())
                .append("\",\"storeId\":").append(purchase.storeId())
                .append(",\"customerId\":").append(purchase.customerId())
                .append(",\"date\":\"").append(purchase.date())
                .append("\",\"items\":[");
        for (int i = 0; i < purchase.items().size(); i++) {
            PurchaseItem item = purchase.items().get(i);
            json.append(i == 0 ? "{\"itemId\":" : ",{\"itemId\":").append(item.itemId())
                    .append(",\"quantity\":").append(item.quantity()).append('}');
        }
        json.append("],\"acceptedAt\":\"").append(purchase.acceptedAt());
        if (purchase.traceparent() != null) {
            json.append("\",\"traceparent\":\"").append(purchase.traceparent());
        }
        return json.append("\"}").toString().getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Decodes a message body.
     *
     * @throws MalformedMessageException if the body is not valid JSON for the type or breaks
     *                                   one of the record's invariants
     */
    public static <T> T decode(byte[] body, Class<T> type) {
        try {
            return MAPPER.readValue(body, type);
        } catch (JacksonException | IllegalArgumentException | NullPointerException e) {
            throw new MalformedMessageException("not a valid " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Decodes one element of an already parsed document (no second parse of its bytes).
     *
     * @throws MalformedMessageException as {@link #decode(byte[], Class)}
     */
    public static <T> T decode(JsonNode node, Class<T> type) {
        try {
            return MAPPER.treeToValue(node, type);
        } catch (JacksonException | IllegalArgumentException | NullPointerException e) {
            throw new MalformedMessageException("not a valid " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /** The mapper itself, for frameworks that need one (e.g. a message converter). */
    public static JsonMapper mapper() {
        return MAPPER;
    }
}
