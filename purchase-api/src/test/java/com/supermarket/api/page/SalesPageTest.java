package com.supermarket.api.page;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.forwardedUrl;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.redirectedUrl;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import com.supermarket.contract.IdRanges;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

/**
 * The sales page as the jar serves it (the Vite build the Maven build runs before the tests):
 * where it is, that everything it loads is in the jar and named relative to it, and its headers.
 */
@WebMvcTest(SalesPageConfiguration.class)
@Import(SalesPageTest.Platform.class)
class SalesPageTest {

    private static final Pattern REFERENCE = Pattern.compile("(?:src|href)=\"([^\"]+)\"");

    @TestConfiguration
    static class Platform {
        @Bean
        IdRanges idRanges() {
            return new IdRanges(1024, 100_000);
        }
    }

    @Autowired
    private MockMvc mvc;

    @Test
    void theRootAndTheBarePathLeadToThePage() throws Exception {
        mvc.perform(get("/")).andExpect(status().isFound()).andExpect(redirectedUrl("/sales/"));
        mvc.perform(get("/sales")).andExpect(status().isFound()).andExpect(redirectedUrl("/sales/"));
        mvc.perform(get("/sales/")).andExpect(status().isOk()).andExpect(forwardedUrl("/sales/index.html"))
                .andExpect(header().string("Content-Security-Policy", SalesPageHeaders.CONTENT_SECURITY_POLICY));
    }

    @Test
    void everythingThePageLoadsIsInTheJarNamedRelativeToIt() throws Exception {
        MvcResult page = mvc.perform(get("/sales/index.html")).andExpect(status().isOk())
                .andExpect(header().string("Content-Security-Policy", SalesPageHeaders.CONTENT_SECURITY_POLICY))
                .andExpect(header().string("X-Content-Type-Options", "nosniff"))
                .andExpect(header().string("Referrer-Policy", "no-referrer"))
                .andExpect(header().string("Cache-Control", "no-cache"))
                .andReturn();
        String html = page.getResponse().getContentAsString();
        assertThat(page.getResponse().getContentType()).startsWith("text/html");
        assertThat(html).as("the page built by Vite, not its source").contains("<script type=\"module\" crossorigin src=\"./assets/");

        List<String> references = new ArrayList<>();
        Matcher reference = REFERENCE.matcher(html);
        while (reference.find()) {
            references.add(reference.group(1));
        }
        List<String> assets = references.stream().filter(ref -> ref.startsWith("./assets/")).toList();
        assertThat(assets).as("script, style sheet and icon").hasSize(3);
        assertThat(references).as("no other origin, no absolute path: the page works wherever the platform is mounted")
                .allMatch(ref -> ref.startsWith("./") || ref.startsWith("#"));
        for (String asset : assets) {
            MvcResult served = mvc.perform(get("/sales/" + asset.substring(2))).andExpect(status().isOk())
                    .andExpect(header().string("Cache-Control", "max-age=31536000, public, immutable"))
                    .andExpect(header().string("X-Content-Type-Options", "nosniff"))
                    .andReturn();
            assertThat(served.getResponse().getContentType()).as(asset).matches("(text/javascript|text/css|image/svg\\+xml).*");
            assertThat(served.getResponse().getContentAsString()).as(asset)
                    .doesNotContainPattern("(?:import|from|url\\()\\s*[\"']?(?:https?:)?//");
        }
    }

    @Test
    void whatIsNotThePageKeepsItsHeaders() throws Exception {
        mvc.perform(get("/openapi.yaml")).andExpect(status().isOk()).andExpect(header().doesNotExist("Content-Security-Policy"));
        mvc.perform(get("/sales/nothing-here.js")).andExpect(status().isNotFound());
    }
}
