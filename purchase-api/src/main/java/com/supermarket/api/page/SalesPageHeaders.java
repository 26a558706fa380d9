package com.supermarket.api.page;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The sales page's security headers. The page loads its own script, style and icon and reads the
 * API of its own origin, nothing else: a Content-Security-Policy of exactly that (no inline script
 * or style, no other origin, no framing, no base or form elsewhere), no MIME sniffing, no referrer
 * sent; the HTML revalidated on every load so a new build is seen at once (the assets' own
 * Cache-Control is set where they are served). Stateless; thread-safe.
 */
final class SalesPageHeaders extends OncePerRequestFilter {

    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        response.setHeader("X-Content-Type-Options", "nosniff");
        response.setHeader("Referrer-Policy", "no-referrer");
        response.setHeader("X-Frame-Options", "DENY");
        if (!request.getRequestURI().startsWith(SalesPageConfiguration.PAGE + "assets/")) {
            response.setHeader(HttpHeaders.CACHE_CONTROL, "no-cache");
        }
        chain.doFilter(request, response);
    }
}
