package com.supermarket.api.items;

import static java.util.concurrent.CompletableFuture.completedFuture;
import static java.util.concurrent.CompletableFuture.failedFuture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.when;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import com.supermarket.contract.IdRanges;
import com.supermarket.contract.StoreQuery.Kind;
import com.supermarket.contract.StoreQuery;
import com.supermarket.contract.StoreQueryReply.Ranked;
import com.supermarket.contract.StoreQueryReply;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

@WebMvcTest(ItemsController.class)
@Import(ItemsControllerTest.Properties.class)
class ItemsControllerTest {

    @TestConfiguration
    static class Properties {
        @Bean
        IdRanges idRanges() {
            return new IdRanges(1024, 100_000);
        }
    }

    @Autowired
    private MockMvc mvc;

    @MockitoBean
    private StoreQueryClient client;

    @Test
    void mapsTheTopItemsOfAStoreWithTheDefaultLimit() throws Exception {
        when(client.query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 7, 10)))
                .thenReturn(completedFuture(StoreQueryReply.ok(List.of(new Ranked(101, 42), new Ranked(5, 3)))));

        mvc.perform(get("/items/store/7"))
                .andExpect(status().isOk())
                .andExpect(content().json("{\"stores\":[{\"itemID\":101,\"numberOfItems\":42},{\"itemID\":5,\"numberOfItems\":3}]}", org.springframework.test.json.JsonCompareMode.STRICT));
    }

    @Test
    void mapsTheTopStoresOfAnItemOnBothPathsWithTheDefaultLimit() throws Exception {
        when(client.query(new StoreQuery(Kind.TOP_STORES_FOR_ITEM, 9, 5)))
                .thenReturn(completedFuture(StoreQueryReply.ok(List.of(new Ranked(7, 42)))));

        for (String path : List.of("/items/top10/9", "/items/top5/9")) {
            mvc.perform(get(path))
                    .andExpect(status().isOk())
                    .andExpect(content().json("{\"stores\":[{\"storeID\":7,\"numberOfItems\":42}]}", org.springframework.test.json.JsonCompareMode.STRICT));
        }
    }

    @Test
    void mapsTheChainsTopItemsWithTheDefaultLimitAndThePurchasesCounted() throws Exception {
        when(client.query(StoreQuery.topItems(10)))
                .thenReturn(completedFuture(StoreQueryReply.ok(List.of(new Ranked(101, 42), new Ranked(5, 3)), 1234)));

        mvc.perform(get("/items/top"))
                .andExpect(status().isOk())
                .andExpect(content().json("{\"items\":[{\"itemID\":101,\"numberOfItems\":42},{\"itemID\":5,\"numberOfItems\":3}],"
                        + "\"purchases\":1234}", org.springframework.test.json.JsonCompareMode.STRICT));
    }

    @Test
    void passesTheRequestedLimit() throws Exception {
        when(client.query(any())).thenReturn(completedFuture(StoreQueryReply.ok(List.of())));

        mvc.perform(get("/items/store/3?limit=1000")).andExpect(status().isOk()).andExpect(content().json("{\"stores\":[]}"));

        verify(client).query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 3, 1000));
        mvc.perform(get("/items/top?limit=1")).andExpect(status().isOk());
        verify(client).query(StoreQuery.topItems(1));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "/items/store/abc         | 400 | storeID 'abc' is not an integer",
            "/items/store/0           | 404 | no store 0",
            "/items/store/1025        | 404 | no store 1025",
            "/items/top10/x1          | 400 | itemID 'x1' is not an integer",
            "/items/top10/100001      | 404 | no item 100001",
            "/items/top5/-1           | 404 | no item -1",
            "/items/store/1?limit=0   | 400 | limit must be within 1..1000, not 0",
            "/items/store/1?limit=1001 | 400 | limit must be within 1..1000, not 1001",
            "/items/top10/1?limit=ten | 400 | limit 'ten' is not an integer",
            "/items/top?limit=0       | 400 | limit must be within 1..1000, not 0",
            "/items/top?limit=1001    | 400 | limit must be within 1..1000, not 1001",
            "/items/top?limit=        | 400 | limit '' is not an integer",
    })
    void rejectsBadIdsAndLimitsWithoutAskingTheStoreService(String path, int status, String message) throws Exception {
        mvc.perform(get(path))
                .andExpect(status().is(status))
                .andExpect(jsonPath("$.message", containsString(message)));

        verifyNoInteractions(client);
    }

    @Test
    void mapsTheStoreServicesNotFoundAndBadRequest() throws Exception {
        when(client.query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 8, 10))).thenReturn(completedFuture(StoreQueryReply.notFound("store 8 unknown")));
        when(client.query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 9, 10))).thenReturn(completedFuture(StoreQueryReply.badRequest("limit too big")));

        mvc.perform(get("/items/store/8")).andExpect(status().isNotFound()).andExpect(jsonPath("$.message").value("store 8 unknown"));
        mvc.perform(get("/items/store/9")).andExpect(status().isBadRequest()).andExpect(jsonPath("$.message").value("limit too big"));
    }

    @Test
    void mapsATimeoutTo504AndAnUnreachableBrokerTo503BothWithRetryAfter() throws Exception {
        when(client.query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 1, 10)))
                .thenReturn(failedFuture(new StoreQueryFailedException(504, "store-service did not answer")));
        when(client.query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 2, 10)))
                .thenReturn(failedFuture(new StoreQueryFailedException(503, "the broker is unreachable")));

        mvc.perform(get("/items/store/1")).andExpect(status().isGatewayTimeout())
                .andExpect(header().string("Retry-After", "1"))
                .andExpect(jsonPath("$.message").value("store-service did not answer"));
        mvc.perform(get("/items/store/2")).andExpect(status().isServiceUnavailable())
                .andExpect(header().exists("Retry-After"))
                .andExpect(jsonPath("$.message").value("the broker is unreachable"));
    }

    @Test
    void answersOnTheThreadThatSettlesTheQueryAfterTheHandlerReturned() throws Exception {
        CompletableFuture<StoreQueryReply> reply = new CompletableFuture<>();
        when(client.query(new StoreQuery(Kind.TOP_STORES_FOR_ITEM, 4, 5))).thenReturn(reply);

        MvcResult result = mvc.perform(get("/items/top10/4")).andExpect(request().asyncStarted()).andReturn();
        assertThat(result.getResponse().getContentAsString()).isEmpty();

        Thread settler = Thread.ofPlatform().start(() -> reply.complete(StoreQueryReply.ok(List.of(new Ranked(12, 7)))));
        settler.join();

        assertThat(result.getResponse().getStatus()).isEqualTo(200);
        assertThat(result.getResponse().getContentType()).isEqualTo("application/json");
        assertThat(result.getResponse().getContentAsString()).isEqualTo("{\"stores\":[{\"storeID\":12,\"numberOfItems\":7}]}");
        assertThat(result.getRequest().isAsyncStarted()).as("the request completed").isFalse();
    }

    @Test
    void mapsTheChainsFailuresAsTheOtherGets() throws Exception {
        when(client.query(StoreQuery.topItems(10)))
                .thenReturn(failedFuture(new StoreQueryFailedException(504, "the store partitions did not answer")));
        when(client.query(StoreQuery.topItems(3)))
                .thenReturn(failedFuture(new StoreQueryFailedException(502, "store-service sent an unreadable reply")));

        mvc.perform(get("/items/top")).andExpect(status().isGatewayTimeout())
                .andExpect(header().string("Retry-After", "1"))
                .andExpect(jsonPath("$.message").value("the store partitions did not answer"));
        mvc.perform(get("/items/top?limit=3")).andExpect(status().isBadGateway())
                .andExpect(jsonPath("$.message").value("store-service sent an unreadable reply"));
    }

    @Test
    void answers500WhenTheQueryFailsUnexpectedly() throws Exception {
        when(client.query(new StoreQuery(Kind.TOP_ITEMS_AT_STORE, 5, 10))).thenReturn(failedFuture(new IllegalStateException("a bug")));

        mvc.perform(get("/items/store/5")).andExpect(status().isInternalServerError())
                .andExpect(jsonPath("$.message").value("internal error; the request was not processed"));
    }
}
