package com.supermarket.api.purchase;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.matchesPattern;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import com.supermarket.contract.IdRanges;
import com.supermarket.contract.PurchaseItem;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;

@WebMvcTest(PurchaseController.class)
@Import({PurchaseRequestParser.class, PurchaseControllerTest.Metrics.class})
class PurchaseControllerTest {

    private static final String ONE_ITEM = "{\"items\":[{\"ItemID\":\"101\",\"numberOfItems\":1}]}";

    @TestConfiguration
    @EnableConfigurationProperties({PurchaseLimits.class, PublishProperties.class})
    static class Metrics {
        @Bean
        IdRanges idRanges() {
            return new IdRanges(1024, 100_000);
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Autowired
    private MockMvc mvc;

    @Autowired
    private MeterRegistry registry;

    @MockitoBean
    private PurchasePublisher publisher;

    @Test
    void createsAPurchaseAndAnswersItsId() throws Exception {
        mvc.perform(post("/purchase/7/customer/7001/date/20210101").contentType("application/json")
                        .content("{\"items\":[{\"ItemID\":\"101\",\"numberOfItems:\":2},{\"ItemID\":5,\"numberOfItems\":\"3\"}]}"))
                .andExpect(status().isCreated())
                .andExpect(jsonPath("$.purchaseId", matchesPattern("[0-9a-f-]{36}")));

        verify(publisher).publish(argThat((PurchaseRequest r) -> r.purchase().storeId() == 7
                && r.purchase().customerId() == 7001 && r.purchase().date().equals(LocalDate.of(2021, 1, 1))
                && r.purchase().items().equals(List.of(new PurchaseItem(101, 2), new PurchaseItem(5, 3)))
                && r.idempotencyKey() == null));
    }

    @ParameterizedTest(name = "Content-Type: {0}")
    @ValueSource(strings = {"text/plain", "application/x-www-form-urlencoded", "application/octet-stream", "application/json; charset=utf-8"})
    void readsTheBodyWhateverTheContentType(String contentType) throws Exception {
        mvc.perform(post("/purchase/1/customer/1000/date/20210101").contentType(contentType).content(ONE_ITEM))
                .andExpect(status().isCreated());
    }

    @Test
    void aRetryWithTheSameIdempotencyKeyCarriesTheSamePurchaseId() throws Exception {
        String first = mvc.perform(post("/purchase/7/customer/7001/date/20210101")
                        .header("Idempotency-Key", "till-3/receipt-981").content(ONE_ITEM))
                .andExpect(status().isCreated()).andReturn().getResponse().getContentAsString();
        String retry = mvc.perform(post("/purchase/7/customer/7001/date/20210101")
                        .header("Idempotency-Key", "till-3/receipt-981").content(ONE_ITEM))
                .andExpect(status().isCreated()).andReturn().getResponse().getContentAsString();

        org.assertj.core.api.Assertions.assertThat(retry).isEqualTo(first).contains("purchaseId");
    }

    @Test
    void answers400ForAnUnusableIdempotencyKeyAndPublishesNothing() throws Exception {
        mvc.perform(post("/purchase/7/customer/7001/date/20210101")
                        .header("Idempotency-Key", "k".repeat(129)).content(ONE_ITEM))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message", containsString("Idempotency-Key")));

        verifyNoInteractions(publisher);
    }

    @Test
    void answers201WhateverTheAcceptHeader() throws Exception {
        mvc.perform(post("/purchase/1/customer/1000/date/20210101").accept("text/plain").content(ONE_ITEM))
                .andExpect(status().isCreated());
        mvc.perform(post("/purchase/1/customer/1000/date/20210101").accept("text/plain").content("{}"))
                .andExpect(status().isBadRequest());
    }

    @Test
    void readsTheBodyWithoutAContentType() throws Exception {
        mvc.perform(post("/purchase/1/customer/1000/date/20210101").content(ONE_ITEM))
                .andExpect(status().isCreated());
    }

    @ParameterizedTest(name = "{0} -> {2}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "/purchase/abc/customer/1/date/20210101   | " + ONE_ITEM + " | storeID 'abc' is not an integer",
            "/purchase/2000/customer/1/date/20210101  | " + ONE_ITEM + " | storeID 2000 is not a known store",
            "/purchase/1/customer/one/date/20210101   | " + ONE_ITEM + " | custID 'one' is not a 32-bit integer",
            "/purchase/1/customer/1/date/20210132     | " + ONE_ITEM + " | date '20210132' is not a real calendar date",
            "/purchase/1/customer/1/date/yesterday    | " + ONE_ITEM + " | date 'yesterday' is not in the form yyyyMMdd",
            "/purchase/1/customer/1/date/20210101     | `{\"items\":`                 | the body is not valid JSON",
            "/purchase/1/customer/1/date/20210101     | `{\"items\":[]}`              | items must not be empty",
            "/purchase/1/customer/1/date/20210101     | `null`                        | the body must be a JSON object",
            "/purchase/1/customer/1/date/20210101     | `[]`                          | the body must be a JSON object",
            "/purchase/1/customer/1/date/20210101     | `{\"items\":[{\"ItemID\":\"1\",\"numberOfItems\":-1}]}` | numberOfItems must be a positive integer",
            "/purchase/1/customer/1/date/20210101     | `{\"items\":[{\"ItemID\":\"x\",\"numberOfItems\":1}]}`  | ItemID must be an integer",
    })
    void answers400NamingTheProblemAndPublishesNothing(String path, String body, String message) throws Exception {
        mvc.perform(post(path).contentType("application/json").content(body))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message", containsString(message)));

        verifyNoInteractions(publisher);
    }

    @Test
    void answers400ForAnEmptyBody() throws Exception {
        mvc.perform(post("/purchase/1/customer/1/date/20210101"))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message", containsString("the body is empty")));
        verifyNoInteractions(publisher);
    }

    @Test
    void answers400NotA413ForAnOversizeBody() throws Exception {
        String item = "{\"ItemID\":\"1\",\"numberOfItems\":1,\"padding\":\"" + "x".repeat(1000) + "\"},";
        String body = "{\"items\":[" + item.repeat(70) + "{\"ItemID\":\"1\",\"numberOfItems\":1}]}";

        mvc.perform(post("/purchase/1/customer/1/date/20210101").contentType("application/json").content(body))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message", containsString("larger than 65536 bytes")));
        verifyNoInteractions(publisher);
    }

    @Test
    void answers400ForBytesThatAreNotUtf8() throws Exception {
        byte[] body = {'{', '"', 'i', 't', 'e', 'm', 's', '"', ':', (byte) 0xFF, (byte) 0xFE, '}'};

        mvc.perform(post("/purchase/1/customer/1/date/20210101").contentType("application/json").content(body))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message", containsString("not valid JSON")));
    }

    @Test
    void countsRejectionsByReason() throws Exception {
        mvc.perform(post("/purchase/1/customer/1/date/20210230").content(ONE_ITEM)).andExpect(status().isBadRequest());

        org.assertj.core.api.Assertions.assertThat(registry.get("api.purchases.rejected").tag("reason", "DATE").counter().count())
                .isEqualTo(1);
    }

    @Test
    void answers422WhenTheIdempotencyKeyNamesAnotherPurchase() throws Exception {
        doThrow(new IdempotencyConflictException("the Idempotency-Key was already used for a different purchase"))
                .when(publisher).publish(any());

        mvc.perform(post("/purchase/1/customer/1/date/20210101").header("Idempotency-Key", "k1").content(ONE_ITEM))
                .andExpect(status().isUnprocessableContent())
                .andExpect(header().doesNotExist("Retry-After"))
                .andExpect(jsonPath("$.message").value("the Idempotency-Key was already used for a different purchase"));
    }

    @Test
    void answers503WithRetryAfterWhenTheBrokerRefuses() throws Exception {
        doThrow(new PublishRefusedException(PublishRefusedException.Reason.CONFIRM_TIMEOUT, "no confirm; retry later", null))
                .when(publisher).publish(any());

        mvc.perform(post("/purchase/1/customer/1/date/20210101").content(ONE_ITEM))
                .andExpect(status().isServiceUnavailable())
                .andExpect(header().string("Retry-After", "1"))
                .andExpect(jsonPath("$.message").value("no confirm; retry later"));
    }

    @Test
    void answersTheErrorBodyForAWrongMethodOrPath() throws Exception {
        mvc.perform(get("/purchase/1/customer/1/date/20210101"))
                .andExpect(status().isMethodNotAllowed())
                .andExpect(jsonPath("$.message").isString());
        mvc.perform(post("/purchase/1/customer/1").content(ONE_ITEM))
                .andExpect(status().isNotFound())
                .andExpect(jsonPath("$.message").value("no such resource"));
    }
}
