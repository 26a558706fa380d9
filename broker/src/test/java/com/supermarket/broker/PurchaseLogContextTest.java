package com.supermarket.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class PurchaseLogContextTest {

    private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    private final Purchase purchase = new Purchase(UUID.randomUUID(), 12, 1, LocalDate.of(2021, 1, 1),
            List.of(new PurchaseItem(1, 1)), Instant.EPOCH);

    @AfterEach
    void clearMdc() {
        MDC.clear();
    }

    @Test
    void aTracedPurchasesLinesCarryItsIdsAndItsRequestsTraceThenTheMessagesAgain() {
        MDC.put("traceId", "11111111111111111111111111111111");
        MDC.put("spanId", "2222222222222222");

        try (PurchaseLogContext ids = PurchaseLogContext.of(purchase.withTraceparent(TRACEPARENT))) {
            assertThat(MDC.getCopyOfContextMap()).containsEntry("purchaseId", purchase.purchaseId().toString())
                    .containsEntry("storeId", "12").containsEntry("traceId", "0af7651916cd43dd8448eb211c80319c")
                    .containsEntry("spanId", "b7ad6b7169203331");
        }

        assertThat(MDC.getCopyOfContextMap()).doesNotContainKeys("purchaseId", "storeId")
                .containsEntry("traceId", "11111111111111111111111111111111").containsEntry("spanId", "2222222222222222");
    }

    @Test
    void anUntracedPurchaseLeavesTheTraceOfTheMessage() {
        MDC.put("traceId", "11111111111111111111111111111111");

        try (PurchaseLogContext ids = PurchaseLogContext.of(purchase)) {
            assertThat(MDC.get("traceId")).isEqualTo("11111111111111111111111111111111");
            assertThat(MDC.get("purchaseId")).isEqualTo(purchase.purchaseId().toString());
        }

        assertThat(MDC.getCopyOfContextMap()).containsOnlyKeys("traceId");
    }
}
