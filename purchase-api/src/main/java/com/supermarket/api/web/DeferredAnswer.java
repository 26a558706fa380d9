package com.supermarket.api.web;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import tools.jackson.databind.json.JsonMapper;

/**
 * A request answered later by whichever thread settles it, not by the request's own thread.
 *
 * <p>A request thread that waits for a reply from elsewhere (a virtual thread parked on a
 * future) must be scheduled again once the reply comes, and on a busy host it then waits for a
 * carrier behind every other request's continuation. Deferred, the request's thread returns to
 * the container at once, and the thread that completes the future writes the answer straight to
 * the socket. {@link #send} writes the status, the headers and the body as JSON, flushes, and
 * completes the request; a client gone meanwhile is logged at debug level. The container sets
 * no timeout of its own: whoever defers a request must settle it (by a deadline of its own).
 *
 * <p>Safe to send from any thread, once: the servlet container serialises the completion with
 * the request's own thread.
 */
public final class DeferredAnswer {

    private static final Logger log = LoggerFactory.getLogger(DeferredAnswer.class);

    private final AsyncContext context;
    private final HttpServletResponse response;
    private final JsonMapper json;

    /** Puts the request in asynchronous mode; the container answers nothing until {@link #send}. */
    public DeferredAnswer(HttpServletRequest request, HttpServletResponse response, JsonMapper json) {
        this.context = request.startAsync(request, response);
        this.context.setTimeout(0);
        this.response = response;
        this.json = json;
    }

    /**
     * Writes the answer {@code answer} makes and completes the request. Never throws: an answer
     * that cannot be made or written as JSON (a bug) is logged and answered {@code 500}.
     */
    public void send(Supplier<ResponseEntity<?>> answer) {
        try {
            ResponseEntity<?> made;
            byte[] body;
            try {
                made = answer.get();
                body = json.writeValueAsBytes(made.getBody());
            } catch (RuntimeException e) {
                made = ApiErrorHandler.internalError(e);
                body = json.writeValueAsBytes(made.getBody());
            }
            response.setStatus(made.getStatusCode().value());
            made.getHeaders().forEach((name, values) -> values.forEach(value -> response.addHeader(name, value)));
            response.setContentType(MediaType.APPLICATION_JSON_VALUE);
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
            response.flushBuffer();
        } catch (IOException e) {
            log.debug("could not answer a deferred request: {}", e.toString());
        } finally {
            context.complete();
        }
    }
}
