import java.net.HttpURLConnection;
import java.net.URI;

/**
 * The container health check of the service images: exits 0 when the service's actuator
 * endpoint answers 200, 1 otherwise. A compiled class instead of curl because the JRE base image
 * is not guaranteed to ship curl or wget, and one more package is one more thing to patch.
 *
 * <p>Usage: {@code java -cp /opt/healthcheck HealthCheck /actuator/health/readiness}; the port is
 * {@code MANAGEMENT_PORT}, where the services serve actuator (each image sets it).
 */
public final class HealthCheck {

    private HealthCheck() {
    }

    public static void main(String[] args) {
        String path = args.length > 0 ? args[0] : "/actuator/health";
        String port = System.getenv("MANAGEMENT_PORT");
        if (port == null || port.isBlank()) {
            System.err.println("health check failed: MANAGEMENT_PORT is not set");
            System.exit(1);
        }
        try {
            HttpURLConnection connection =
                    (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
            connection.setConnectTimeout(2_000);
            connection.setReadTimeout(3_000);
            int status = connection.getResponseCode();
            System.exit(status == 200 ? 0 : 1);
        } catch (Exception e) {
            System.err.println("health check failed: " + e);
            System.exit(1);
        }
    }
}
