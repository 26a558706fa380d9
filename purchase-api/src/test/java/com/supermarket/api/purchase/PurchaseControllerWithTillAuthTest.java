package com.supermarket.api.purchase;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;
import static org.mockito.Mockito.verifyNoInteractions;

import com.supermarket.api.auth.TillAuthSlice;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;

/**
 * The POST's contract tests again with till authentication on and each request sending its
 * store's key: every answer must stay what API.md says. Plus the refusals the key adds.
 */
@WebMvcTest(PurchaseController.class)
@Import({PurchaseRequestParser.class, PurchaseControllerTest.Metrics.class, TillAuthSlice.class})
class PurchaseControllerWithTillAuthTest extends PurchaseControllerTest {

    @DynamicPropertySource
    static void tillAuthentication(DynamicPropertyRegistry registry) {
        TillAuthSlice.enable(registry);
    }

    @Autowired
    private MockMvc mvc;

    @Autowired
    private PurchasePublisher publisher;

    @Test
    void anotherStoresKeyIsRefusedBeforeTheBodyIsRead() throws Exception {
        mvc.perform(post("/purchase/7/customer/7000/date/20210101").header("Authorization", "Bearer tk_contract_8")
                        .content("not even json"))
                .andExpect(status().isForbidden())
                .andExpect(jsonPath("$.message").value("the key belongs to another store"));
        mvc.perform(post("/purchase/7/customer/7000/date/20210101").header("Authorization", "Bearer tk_wrong")
                        .content("not even json"))
                .andExpect(status().isUnauthorized())
                .andExpect(header().string("WWW-Authenticate", "Bearer"));
        verifyNoInteractions(publisher);
    }
}
