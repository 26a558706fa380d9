package com.supermarket.store.counts;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class CountsSummaryTest {

    private static final int STORES = 16;
    private static final int ITEMS = 50;

    @Test
    void copiesThatCountedTheSamePurchasesInAnyOrderHaveTheSameSummary() {
        List<Purchase> purchases = purchases(500);
        StoreCounts first = counts(purchases);
        List<Purchase> shuffled = new ArrayList<>(purchases);
        Collections.shuffle(shuffled, new Random(3));
        // A redelivery counts once, so the summary is the same as well.
        shuffled.add(purchases.get(7));
        StoreCounts second = counts(shuffled);

        CountsSummary summary = CountsSummary.of(first);
        assertThat(CountsSummary.of(second)).isEqualTo(summary);
        assertThat(summary.purchases()).isEqualTo(500);
        assertThat(summary.quantity()).isEqualTo(purchases.stream().flatMap(p -> p.items().stream())
                .mapToLong(PurchaseItem::quantity).sum());
        assertThat(summary.digest()).hasSize(16);
    }

    @Test
    void aMissingPurchaseOrAMovedCountChangesTheDigest() {
        List<Purchase> purchases = purchases(200);
        CountsSummary all = CountsSummary.of(counts(purchases));

        assertThat(CountsSummary.of(counts(purchases.subList(1, 200))).digest()).isNotEqualTo(all.digest());
        // The same quantity at another item: equal purchases and quantity, another digest.
        Purchase moved = purchases.getFirst();
        PurchaseItem line = moved.items().getFirst();
        List<PurchaseItem> items = new ArrayList<>(moved.items());
        items.set(0, new PurchaseItem(line.itemId() % ITEMS + 1, line.quantity()));
        List<Purchase> changed = new ArrayList<>(purchases);
        changed.set(0, new Purchase(moved.purchaseId(), moved.storeId(), moved.customerId(), moved.date(), items,
                moved.acceptedAt()));
        CountsSummary other = CountsSummary.of(counts(changed));
        assertThat(other.quantity()).isEqualTo(all.quantity());
        assertThat(other.purchases()).isEqualTo(all.purchases());
        assertThat(other.digest()).isNotEqualTo(all.digest());
    }

    @Test
    void emptyCountsSumToZero() {
        assertThat(CountsSummary.of(new StoreCounts(STORES, ITEMS, 64))).isEqualTo(new CountsSummary(0, 0, "0000000000000000"));
    }

    private static StoreCounts counts(List<Purchase> purchases) {
        StoreCounts counts = new StoreCounts(STORES, ITEMS, 1024);
        purchases.forEach(counts::apply);
        return counts;
    }

    private static List<Purchase> purchases(int count) {
        Random random = new Random(5);
        List<Purchase> purchases = new ArrayList<>();
        for (int p = 0; p < count; p++) {
            List<PurchaseItem> items = new ArrayList<>();
            for (int line = 1 + random.nextInt(3); line > 0; line--) {
                items.add(new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(5)));
            }
            purchases.add(new Purchase(UUID.randomUUID(), 1 + random.nextInt(STORES), 1, LocalDate.EPOCH, items, Instant.EPOCH));
        }
        return purchases;
    }
}
