package com.supermarket.api.web;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.web.error.ErrorAttributeOptions;
import org.springframework.boot.webmvc.error.DefaultErrorAttributes;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.WebRequest;

/**
 * Errors that never reach a controller (rejected by Tomcat, or forwarded to {@code /error})
 * also answer the contract's {@code {"message": ...}} body. Stateless and thread-safe.
 */
@Component
class MessageOnlyErrorAttributes extends DefaultErrorAttributes {

    @Override
    public Map<String, Object> getErrorAttributes(WebRequest request, ErrorAttributeOptions options) {
        Object code = request.getAttribute("jakarta.servlet.error.status_code", RequestAttributes.SCOPE_REQUEST);
        HttpStatus status = code instanceof Integer value ? HttpStatus.resolve(value) : null;
        String message = status == null ? "error" : status.getReasonPhrase();
        if (status == HttpStatus.NOT_FOUND) {
            message = "no such resource";
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("message", message);
        return body;
    }
}
