package com.supermarket.api.purchase;

import com.supermarket.contract.PurchaseItem;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;

/**
 * The fingerprint of what a purchase says, to tell a retry from a different purchase under the
 * same {@code Idempotency-Key}: the first 128 bits of SHA-256 over a canonical text of store,
 * customer, date and item lines, as 32 hex digits.
 *
 * <p>Canonical: it is computed from the parsed purchase, so everything the parser
 * normalises gives the same fingerprint (JSON key order and whitespace, {@code ItemID} as string
 * or number, {@code numberOfItems} with or without the colon, counts as strings, unknown
 * fields); the item lines are sorted, so the same basket in another order is the same purchase.
 * It holds neither the purchase id (derived from it) nor the time of acceptance. Stateless and
 * thread-safe.
 */
final class PurchaseFingerprint {

    private static final Comparator<PurchaseItem> LINE_ORDER =
            Comparator.comparingInt(PurchaseItem::itemId).thenComparingInt(PurchaseItem::quantity);

    private PurchaseFingerprint() {
    }

    static String of(int storeId, int customerId, LocalDate date, List<PurchaseItem> items) {
        PurchaseItem[] lines = items.toArray(PurchaseItem[]::new);
        Arrays.sort(lines, LINE_ORDER);
        StringBuilder canonical = new StringBuilder(32 + lines.length * 12)
                .append("purchase/1 store ").append(storeId)
                .append(" customer ").append(customerId)
                .append(" date ").append(date)
                .append(" items");
        for (PurchaseItem line : lines) {
            canonical.append(' ').append(line.itemId()).append('x').append(line.quantity());
        }
        byte[] digest = sha256().digest(canonical.toString().getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(digest, 0, 16);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
