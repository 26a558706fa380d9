package com.supermarket.api.web;

import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Gives every error Spring MVC itself raises (unknown path, wrong method, unsupported media
 * type, ...) the contract's error body {@code {"message": ...}} instead of a problem detail.
 * Feature errors are mapped by their own controllers. Stateless and thread-safe.
 */
@RestControllerAdvice
class ApiErrorHandler extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ApiErrorHandler.class);

    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
                                                             HttpStatusCode statusCode, WebRequest request) {
        HttpStatus status = HttpStatus.resolve(statusCode.value());
        String reason = status == null ? "error " + statusCode.value() : status.getReasonPhrase();
        String message = statusCode.value() == 404 ? "no such resource" : reason + ": " + ex.getMessage();
        return ResponseEntity.status(statusCode).headers(headers).body(Map.of("message", message));
    }

    /** A bug, never bad input: logged with its stack trace, answered without internals. */
    @ExceptionHandler(Exception.class)
    ResponseEntity<Map<String, String>> unexpected(Exception ex) {
        return internalError(ex);
    }

    /** The answer to a bug, logged with its stack trace; also {@link DeferredAnswer}'s. */
    static ResponseEntity<Map<String, String>> internalError(Exception ex) {
        log.error("unexpected error", ex);
        return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
                .body(Map.of("message", "internal error; the request was not processed"));
    }
}
