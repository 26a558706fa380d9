package com.supermarket.api.items;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import com.supermarket.api.auth.TillAuthSlice;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;

/**
 * The queries' contract tests again with till authentication on and a manager key sent: every
 * answer must stay what API.md says. Plus what a till's key may not read.
 */
@WebMvcTest(ItemsController.class)
@Import({ItemsControllerTest.Properties.class, TillAuthSlice.class, ItemsControllerWithTillAuthTest.Metrics.class})
class ItemsControllerWithTillAuthTest extends ItemsControllerTest {

    @TestConfiguration(proxyBeanMethods = false)
    static class Metrics {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @DynamicPropertySource
    static void tillAuthentication(DynamicPropertyRegistry registry) {
        TillAuthSlice.enable(registry);
    }

    @Autowired
    private MockMvc mvc;

    @Test
    void aTillReadsItsOwnStoreOnlyAndNoItemRanking() throws Exception {
        mvc.perform(get("/items/store/8").header("Authorization", "Bearer tk_contract_7"))
                .andExpect(status().isForbidden())
                .andExpect(jsonPath("$.message").value("the key belongs to another store"));
        mvc.perform(get("/items/top10/5").header("Authorization", "Bearer tk_contract_7"))
                .andExpect(status().isForbidden())
                .andExpect(jsonPath("$.message").value("the figures of every store need a manager key"));
        mvc.perform(get("/items/top5/5").header("Authorization", "Bearer tk_contract_7")).andExpect(status().isForbidden());
        mvc.perform(get("/items/top5/5").header("Authorization", "Bearer tk_unknown")).andExpect(status().isUnauthorized());
        mvc.perform(get("/items/top").header("Authorization", "Bearer tk_contract_7"))
                .andExpect(status().isForbidden())
                .andExpect(jsonPath("$.message").value("the figures of every store need a manager key"));
        mvc.perform(get("/items/top").header("Authorization", "Bearer tk_unknown")).andExpect(status().isUnauthorized());
    }
}
