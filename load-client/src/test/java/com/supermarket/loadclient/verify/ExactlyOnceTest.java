package com.supermarket.loadclient.verify;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExactlyOnceTest {

    @Test
    void everyAcceptedPurchaseStoredAndCountedOnceKeepsThePromise() {
        ExactlyOnce.Verdict verdict = ExactlyOnce.judge(100, 0, 100, 100);

        assertThat(verdict.kept()).isTrue();
        assertThat(verdict.line()).isEqualTo("100 accepted, 0 maybe-accepted, 100 stored, 100 counted: 0 lost, 0 duplicated");
        assertThat(verdict.numbers()).isEqualTo("100 0 100 100 0 0");
    }

    @Test
    void anAcceptedPurchaseMissingFromBothServicesIsLostInEach() {
        ExactlyOnce.Verdict verdict = ExactlyOnce.judge(100, 0, 97, 97);

        assertThat(verdict.lost()).isEqualTo(6);
        assertThat(verdict.duplicated()).isZero();
        assertThat(verdict.kept()).isFalse();
    }

    @Test
    void aMaybeAcceptedPurchaseMayBeStoredAndCountedOrNot() {
        assertThat(ExactlyOnce.judge(100, 5, 103, 103).kept()).isTrue();
        assertThat(ExactlyOnce.judge(100, 5, 100, 100).kept()).isTrue();
        assertThat(ExactlyOnce.judge(100, 5, 105, 105).kept()).isTrue();
    }

    @Test
    void aPurchaseStoredButNotCountedIsLost() {
        ExactlyOnce.Verdict verdict = ExactlyOnce.judge(100, 5, 103, 101);

        assertThat(verdict.lost()).isEqualTo(2);
        assertThat(verdict.duplicated()).isZero();
    }

    @Test
    void countingMoreThanWasStoredIsADoubleCountEvenWithinTheMaybeAcceptedSlack() {
        // purchases-service's primary key holds a purchase once, so 100 got through; the 5 maybe
        // accepted purchases did not, and cannot explain store-service's 2 extra.
        ExactlyOnce.Verdict verdict = ExactlyOnce.judge(100, 5, 100, 102);

        assertThat(verdict.duplicated()).isEqualTo(2);
        assertThat(verdict.lost()).isZero();
    }

    @Test
    void lateRetriesOfAcceptedPurchasesAddNothingToTheAllowance() {
        // Two stores re-sent an accepted purchase after a lost 201: still 100 purchases. A store
        // that forgot the ids and counted them again shows as 2 duplicated.
        assertThat(ExactlyOnce.judge(100, 0, 100, 100).kept()).isTrue();
        ExactlyOnce.Verdict countedAgain = ExactlyOnce.judge(100, 0, 100, 102);

        assertThat(countedAgain.duplicated()).isEqualTo(2);
        assertThat(countedAgain.line()).endsWith("0 lost, 2 duplicated");
    }

    @Test
    void moreStoredAndCountedThanWereEverSentIsDuplicatedInEachService() {
        ExactlyOnce.Verdict verdict = ExactlyOnce.judge(100, 5, 108, 108);

        assertThat(verdict.duplicated()).isEqualTo(3 + 3);
        assertThat(verdict.lost()).isZero();
    }

    @Test
    void aPurchaseLostByPurchasesServiceButCountedIsLostNotDuplicated() {
        ExactlyOnce.Verdict verdict = ExactlyOnce.judge(100, 0, 98, 100);

        assertThat(verdict.lost()).isEqualTo(2);
        assertThat(verdict.duplicated()).isZero();
    }
}
