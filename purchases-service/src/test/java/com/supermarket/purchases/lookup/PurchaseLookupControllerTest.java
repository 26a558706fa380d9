package com.supermarket.purchases.lookup;

import static org.mockito.BDDMockito.given;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;

@WebMvcTest(PurchaseLookupController.class)
class PurchaseLookupControllerTest {

    @Autowired
    private MockMvc mvc;

    @MockitoBean
    private PurchaseRepository repository;

    @Test
    void countsTheStoredPurchases() throws Exception {
        given(repository.count()).willReturn(691_200L);

        mvc.perform(get("/purchases/count")).andExpect(status().isOk()).andExpect(jsonPath("$.count").value(691_200));
    }

    @Test
    void returnsAStoredPurchaseWithItsItems() throws Exception {
        UUID id = UUID.randomUUID();
        given(repository.findById(id)).willReturn(Optional.of(new Purchase(id, 7, 7001, LocalDate.of(2021, 1, 2),
                List.of(new PurchaseItem(101, 2), new PurchaseItem(5, 1)), Instant.parse("2021-01-02T10:00:00Z"))));

        mvc.perform(get("/purchases/{id}", id))
                .andExpect(status().isOk())
                .andExpect(jsonPath("$.purchaseId").value(id.toString()))
                .andExpect(jsonPath("$.storeId").value(7))
                .andExpect(jsonPath("$.date").value("2021-01-02"))
                .andExpect(jsonPath("$.items[0].itemId").value(101))
                .andExpect(jsonPath("$.items[0].quantity").value(2))
                .andExpect(jsonPath("$.items.length()").value(2));
    }

    @Test
    void answers404WithAMessageForAnUnknownPurchase() throws Exception {
        UUID id = UUID.randomUUID();
        given(repository.findById(id)).willReturn(Optional.empty());

        mvc.perform(get("/purchases/{id}", id)).andExpect(status().isNotFound()).andExpect(jsonPath("$.message").exists());
    }

    @Test
    void answers400ForSomethingThatIsNotAPurchaseId() throws Exception {
        mvc.perform(get("/purchases/{id}", "12x")).andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message").value("not a purchase id (a UUID): 12x"));
    }

    @Test
    void answers503WithRetryAfterWhenTheStoreIsDown() throws Exception {
        given(repository.count()).willThrow(new DataAccessResourceFailureException("connection refused"));

        mvc.perform(get("/purchases/count")).andExpect(status().isServiceUnavailable())
                .andExpect(header().exists("Retry-After")).andExpect(jsonPath("$.message").exists());
    }
}
