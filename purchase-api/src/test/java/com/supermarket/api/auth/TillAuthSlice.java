package com.supermarket.api.auth;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Till authentication in a {@code @WebMvcTest} slice, with a client that sends the right key:
 * the contract tests of the controllers, run again with authentication on, must answer exactly
 * as without it. Keys of stores 1..{@value #STORES} ({@code tk_contract_<store>}) and a manager
 * key; a filter in front of the dispatcher adds to each request without a key the key of the
 * path's store (store 1's when the path holds no number) or, on {@code /items/**}, the manager's.
 */
@TestConfiguration(proxyBeanMethods = false)
@EnableConfigurationProperties(TillAuthProperties.class)
@Import({TillAuthConfiguration.class, TillAuthInterceptor.Registration.class})
public class TillAuthSlice {

    static final int STORES = 2000;
    private static final String MANAGER_KEY = "tk_contract_manager";

    /** Turns authentication on with the keys above, for {@code @DynamicPropertySource}. */
    public static void enable(DynamicPropertyRegistry registry) {
        StringBuilder hashes = new StringBuilder();
        for (int store = 1; store <= STORES; store++) {
            hashes.append(TillKeysTesting.line(Integer.toString(store), "tk_contract_" + store));
        }
        hashes.append(TillKeysTesting.line("manager", MANAGER_KEY));
        try {
            Path file = Files.createTempFile("contract-till-key-hashes", ".txt");
            file.toFile().deleteOnExit();
            Files.writeString(file, hashes);
            registry.add("api.auth.enabled", () -> "true");
            registry.add("api.auth.keys-file", file::toString);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String keyFor(String path) {
        if (path.startsWith("/items/")) {
            return MANAGER_KEY;
        }
        String[] segments = path.split("/");
        String store = segments.length > 2 && segments[2].matches("[0-9]{1,9}") ? segments[2] : "1";
        return "tk_contract_" + Integer.parseInt(store);
    }

    @Bean
    Filter tillKeySender() {
        return (request, response, chain) -> {
            HttpServletRequest http = (HttpServletRequest) request;
            String key = "Bearer " + keyFor(http.getRequestURI());
            chain.doFilter(http.getHeader("Authorization") != null ? http : new HttpServletRequestWrapper(http) {
                @Override
                public String getHeader(String name) {
                    return "Authorization".equalsIgnoreCase(name) ? key : super.getHeader(name);
                }

                @Override
                public Enumeration<String> getHeaders(String name) {
                    return "Authorization".equalsIgnoreCase(name) ? Collections.enumeration(java.util.List.of(key))
                            : super.getHeaders(name);
                }
            }, response);
        };
    }
}
