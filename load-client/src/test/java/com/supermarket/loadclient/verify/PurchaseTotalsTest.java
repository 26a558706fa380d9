package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.supermarket.loadclient.verify.PurchaseTotals.Ranked;
import com.supermarket.contract.CountsDigest;
import com.supermarket.loadclient.verify.PurchaseTotals.Summary;

class PurchaseTotalsTest {

    @Test
    void topItemsOfAStoreAreMostFirstTiesToTheLowerItemAndCutAtTheLimit() {
        PurchaseTotals totals = new PurchaseTotals();
        totals.addSold(3, 50, 4);
        totals.addSold(3, 9, 4);
        totals.addSold(3, 70, 7);
        totals.addSold(3, 8, 1);
        totals.addSold(3, 9, 2); // the same item again adds up: 6
        totals.addSold(4, 1, 99); // another store

        assertThat(totals.topItemsAt(3, 10)).containsExactly(new Ranked(70, 7), new Ranked(9, 6), new Ranked(50, 4),
                new Ranked(8, 1));
        assertThat(totals.topItemsAt(3, 2)).containsExactly(new Ranked(70, 7), new Ranked(9, 6));
        assertThat(totals.topItemsAt(5, 10)).isEmpty();
    }

    @Test
    void aTieAtTheCutKeepsTheLowerIdsAndZeroQuantitiesAreNeverRanked() {
        PurchaseTotals totals = new PurchaseTotals();
        for (int store = 12; store >= 1; store--) {
            totals.addSold(store, 101, store <= 6 ? 5 : 2);
        }
        totals.addSold(40, 101, 0);

        assertThat(totals.topStoresFor(101, 5)).extracting(Ranked::id).containsExactly(1, 2, 3, 4, 5);
        assertThat(totals.topStoresFor(101, 8)).extracting(Ranked::id).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        assertThat(totals.topStoresFor(101, 100)).hasSize(12).extracting(Ranked::id).doesNotContain(40);
    }

    @Test
    void summaryOfAPartitionHoldsItsStoresOnly() {
        PurchaseTotals totals = new PurchaseTotals();
        totals.addSold(1, 1, 1);
        totals.addPurchases(1, 1);
        totals.addSold(7, 101, 40);
        totals.addSold(7, 101, 2);
        totals.addPurchases(7, 3);
        totals.addSold(2, 5, 9);
        totals.addPurchases(2, 2);

        assertThat(totals.summary(1, 2)).isEqualTo(new Summary(4, 43,
                digest(1, 1, 1, 7, 101, 42)));
        assertThat(totals.summary(0, 2)).isEqualTo(new Summary(2, 9, digest(2, 5, 9)));
        assertThat(totals.summary(0, 1).purchases()).isEqualTo(6);
        assertThat(totals.purchases()).isEqualTo(6);
        assertThat(new PurchaseTotals().summary(0, 1)).isEqualTo(new Summary(0, 0, "0000000000000000"));
    }

    /** The contract's digest of the (store, item, count) triples given in a row. */
    static String digest(int... triples) {
        CountsDigest digest = new CountsDigest();
        for (int i = 0; i < triples.length; i += 3) {
            digest.add(triples[i], triples[i + 1], triples[i + 2]);
        }
        return digest.hex();
    }
}
