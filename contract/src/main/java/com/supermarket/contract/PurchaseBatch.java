package com.supermarket.contract;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * Many purchases in one AMQP message: purchase-api's group commit publishes what gathered while
 * the previous publish was in flight as one message with one publisher confirm, and both
 * consumers settle it with one ack. Every purchase keeps its own id, so deduplication stays per
 * purchase, and a poison purchase inside a batch is isolated without losing its neighbours.
 *
 * <h2>Wire format, version 1</h2>
 * The AMQP {@code type} property is {@value #MESSAGE_TYPE}; the body is the JSON object
 * {@code {"version":1,"purchases":[<purchase>, ...]}}, each element a {@link Purchase} in
 * {@link WireFormat}'s encoding; a message of any other type, or of none, is malformed. Every
 * purchase of one message belongs to stores of one store partition, and the message goes to one
 * of that partition's shard queues ({@link Topology#routingKey(int, int, long, int)}).
 *
 * <p>Immutable and thread-safe; the codec methods are static and stateless.
 *
 * @param version   the format version, {@value #VERSION}
 * @param purchases the purchases, at least one
 */
public record PurchaseBatch(int version, List<Purchase> purchases) {

    /** The AMQP {@code type} property of a batch message. */
    public static final String MESSAGE_TYPE = "purchase-batch/1";

    /** The only version this code writes and reads. */
    public static final int VERSION = 1;

    private static final byte[] HEAD = ("{\"version\":" + VERSION + ",\"purchases\":[").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TAIL = "]}".getBytes(StandardCharsets.US_ASCII);

    public PurchaseBatch {
        purchases = List.copyOf(Objects.requireNonNull(purchases, "purchases"));
        if (purchases.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one purchase");
        }
    }

    /**
     * Frames purchases that were each encoded with {@link WireFormat#encode} into one batch body.
     * Encoding each purchase on its request's thread and only concatenating here keeps the
     * serial part of a group commit to a copy.
     */
    public static byte[] frame(List<byte[]> encodedPurchases) {
        if (encodedPurchases.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one purchase");
        }
        int size = HEAD.length + TAIL.length + encodedPurchases.size() - 1;
        for (byte[] purchase : encodedPurchases) {
            size += purchase.length;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(size);
        out.writeBytes(HEAD);
        for (int i = 0; i < encodedPurchases.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.writeBytes(encodedPurchases.get(i));
        }
        out.writeBytes(TAIL);
        return out.toByteArray();
    }

    /**
     * Decodes a batch message, whose {@code type} is {@value #MESSAGE_TYPE}. Each purchase is
     * decoded on its own, so one that is
     * malformed or breaks an invariant lands in {@link Decoded#poison()} with its raw JSON while
     * the others decode normally.
     *
     * @throws MalformedMessageException if the message as a whole cannot be read (no type, an
     *                                   unknown type or version, not JSON, no purchases array): nothing in it
     *                                   can be trusted, so the whole message is poison
     */
    public static Decoded decode(String type, byte[] body) {
        if (!MESSAGE_TYPE.equals(type)) {
            throw new MalformedMessageException("unknown message type '" + type + "', expected " + MESSAGE_TYPE, null);
        }
        JsonNode root;
        try {
            root = WireFormat.mapper().readTree(body);
        } catch (JacksonException e) {
            throw new MalformedMessageException("not a valid purchase batch: " + e.getOriginalMessage(), e);
        }
        if (!root.path("version").isInt() || root.path("version").intValue() != VERSION) {
            throw new MalformedMessageException("not a version " + VERSION + " purchase batch: version "
                    + root.path("version"), null);
        }
        JsonNode elements = root.path("purchases");
        if (!elements.isArray() || elements.isEmpty()) {
            throw new MalformedMessageException("a purchase batch without purchases", null);
        }
        List<Purchase> purchases = new ArrayList<>(elements.size());
        List<Poison> poison = new ArrayList<>(0);
        for (JsonNode element : elements) {
            // From the parsed tree: the element's bytes are only written out again for poison.
            try {
                purchases.add(WireFormat.decode(element, Purchase.class));
            } catch (MalformedMessageException e) {
                poison.add(new Poison(WireFormat.mapper().writeValueAsBytes(element), e.getMessage()));
            }
        }
        return new Decoded(List.copyOf(purchases), List.copyOf(poison));
    }

    /**
     * A decoded message.
     *
     * @param purchases the purchases that decoded, in message order
     * @param poison    the elements that did not, to be parked alone
     */
    public record Decoded(List<Purchase> purchases, List<Poison> poison) {
    }

    /**
     * One element of a message that is not a valid purchase, or a purchase a consumer refuses.
     *
     * @param json     its raw JSON, as it should be parked for an operator
     * @param reason   why it was refused
     * @param purchase the purchase when it decoded (a consumer refused it), for the logs; null
     *                 when the element is not a valid purchase
     */
    public record Poison(byte[] json, String reason, Purchase purchase) {

        /** An element that is not a valid purchase. */
        public Poison(byte[] json, String reason) {
            this(json, reason, null);
        }

        /** A valid purchase that a consumer refuses. */
        public static Poison of(Purchase purchase, String reason) {
            return new Poison(WireFormat.encode(purchase), reason, purchase);
        }
    }
}
