package com.supermarket.api.auth;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The Spring MVC wiring of till authentication, and its only web-framework code: after Spring
 * matched the route (so the path variables are Spring's, not a second parser's), asks
 * {@link TillAuthenticator} and answers a refusal itself ({@code 401} with
 * {@code WWW-Authenticate: Bearer}, or {@code 403}; body {@code {"message"}}) before the
 * controller reads the body. Paths that match no controller pass through to their 404/405.
 * Stateless and thread-safe.
 */
final class TillAuthInterceptor implements HandlerInterceptor {

    private final TillAuthenticator authenticator;

    TillAuthInterceptor(TillAuthenticator authenticator) {
        this.authenticator = authenticator;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) throws IOException {
        if (!(handler instanceof HandlerMethod)) {
            return true;
        }
        String pattern = (String) request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        @SuppressWarnings("unchecked")
        Map<String, String> variables = (Map<String, String>) request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        Access access = pattern == null ? Access.ITEM_QUERY
                : pattern.startsWith("/purchase/") ? Access.PURCHASE
                : pattern.startsWith("/items/store/") ? Access.STORE_QUERY
                : Access.ITEM_QUERY; // the item rankings, and any route added later: manager only until decided
        String store = variables == null ? null : variables.get("storeID");
        AuthDecision decision = authenticator.decide(access, store, request.getHeader(HttpHeaders.AUTHORIZATION),
                request.getMethod(), request.getRequestURI());
        if (decision.allowed()) {
            return true;
        }
        byte[] body = decision.body().getBytes(StandardCharsets.UTF_8);
        response.setStatus(decision.status());
        if (decision.status() == 401) {
            response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
        }
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        return false;
    }

    /** Puts the interceptor on the purchase and query routes when authentication is on. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "api.auth.enabled", havingValue = "true")
    static class Registration implements WebMvcConfigurer {

        private final TillAuthenticator authenticator;

        Registration(TillAuthenticator authenticator) {
            this.authenticator = authenticator;
        }

        @Override
        public void addInterceptors(InterceptorRegistry registry) {
            registry.addInterceptor(new TillAuthInterceptor(authenticator)).addPathPatterns("/purchase/**", "/items/**");
        }
    }
}
