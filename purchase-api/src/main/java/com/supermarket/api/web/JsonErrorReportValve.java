package com.supermarket.api.web;

import java.io.IOException;
import java.io.Writer;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.ConfigurableTomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * Requests Tomcat rejects before any servlet sees them (an encoded slash or NUL in the path, a
 * malformed header) also answer the contract's {@code {"message": ...}} instead of Tomcat's
 * HTML page. Stateless and thread-safe.
 */
final class JsonErrorReportValve extends ErrorReportValve {

    JsonErrorReportValve() {
        setShowReport(false);
        setShowServerInfo(false);
    }

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        HttpStatus known = HttpStatus.resolve(status);
        String message = known == null ? "error " + status : known.getReasonPhrase();
        try {
            response.setContentType("application/json");
            response.setCharacterEncoding("UTF-8");
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write("{\"message\":\"" + message + " (rejected by the HTTP server)\"}");
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // the client is gone or the response was committed meanwhile: nothing left to say
        }
    }

    /** Puts the valve on the host's pipeline, after Spring Boot's own (so it reports first). */
    @Component
    static class Installer implements WebServerFactoryCustomizer<ConfigurableTomcatWebServerFactory> {
        @Override
        public void customize(ConfigurableTomcatWebServerFactory factory) {
            factory.addContextCustomizers(context -> context.getParent().getPipeline().addValve(new JsonErrorReportValve()));
        }
    }
}
