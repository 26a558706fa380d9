package com.supermarket.api.web;

import java.time.Duration;
import java.util.Map;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * The first half of a pod's stop, called by its preStop hook ({@code GET /actuator/drain/{seconds}}
 * on the management port): from the call on, every answer on the public port carries
 * {@code Connection: close} and its connection is closed after it, and the call returns after
 * {@code seconds}, when the kubelet sends the SIGTERM that starts the graceful drain.
 *
 * <p>Why: the Service and the load balancer stop sending a stopping pod new connections, but a
 * client's kept-alive connection stays where it is. Were those connections open at the SIGTERM,
 * the drain would close them while idle, and a request a client sent at that moment would get no
 * answer at all. Closed after an answer instead, while the pod still serves, each client's next
 * request opens a new connection, which goes to another pod. A connection idle for the whole wait
 * is still closed at the SIGTERM.
 *
 * <p>A GET, because that is the only call a preStop hook makes; it changes nothing a repeated call
 * would change again. Thread-safe: the protocol handler's setting is read per request by Tomcat.
 */
@Component
@WebEndpoint(id = "drain")
public class DrainEndpoint implements ApplicationListener<WebServerInitializedEvent> {

    private static final Logger log = LoggerFactory.getLogger(DrainEndpoint.class);
    private static final Duration LONGEST_WAIT = Duration.ofMinutes(10);

    private volatile AbstractHttp11Protocol<?> publicPort;

    /** Keeps the public port's HTTP protocol; the management server's own (namespace "management") is not it. */
    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        if (event.getApplicationContext().getServerNamespace() == null && event.getWebServer() instanceof TomcatWebServer tomcat
                && tomcat.getTomcat().getConnector().getProtocolHandler() instanceof AbstractHttp11Protocol<?> http) {
            publicPort = http;
        }
    }

    /** Closes every connection after its next answer from now on, then waits {@code seconds} before answering. */
    @ReadOperation
    public Map<String, Object> drain(@Selector int seconds) throws InterruptedException {
        Duration wait = Duration.ofSeconds(Math.clamp(seconds, 0, LONGEST_WAIT.toSeconds()));
        AbstractHttp11Protocol<?> http = publicPort;
        if (http == null) {
            throw new IllegalStateException("the public HTTP port has not started");
        }
        // One request per connection: Tomcat answers with Connection: close and closes it after.
        http.setMaxKeepAliveRequests(1);
        log.info("Draining: every answer closes its connection; the stop may begin in {} s", wait.toSeconds());
        Thread.sleep(wait);
        return Map.of("closingConnections", true, "waitedSeconds", wait.toSeconds());
    }
}
