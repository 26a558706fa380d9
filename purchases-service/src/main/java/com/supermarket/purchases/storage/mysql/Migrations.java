package com.supermarket.purchases.storage.mysql;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies the schema migrations as the schema-owning (migration) database user, and nothing
 * else: the one-off step that lets the service itself run as a user with {@code SELECT, INSERT}
 * only ({@code MYSQL_MIGRATE=false}). Run from the service's image, before the service starts
 * (the chart's init container, compose's one-off {@code purchases-migrations}):
 *
 * <pre>java -Dloader.main=com.supermarket.purchases.storage.mysql.Migrations \
 *      org.springframework.boot.loader.launch.PropertiesLauncher</pre>
 *
 * <p>It reads {@code MYSQL_URL}, {@code MYSQL_MIGRATION_USERNAME},
 * {@code MYSQL_MIGRATION_PASSWORD} and {@code MYSQL_CONNECT_RETRIES} and applies the same
 * migrations, from the same location, as the service does when it migrates in-process (the
 * default, for local runs).
 */
public final class Migrations {

    /**
     * All the service's own user needs on its database ({@code GRANT SELECT, INSERT ON db.*}): it
     * inserts and reads purchases, never updates, deletes or changes the schema.
     */
    public static final String RUNTIME_PRIVILEGES = "SELECT, INSERT";

    /** Where the migrations live; {@code spring.flyway.locations} of the mysql profile. */
    public static final String LOCATION = "classpath:db/migration";

    private Migrations() {
    }

    /**
     * Attempts to reach a database that does not answer yet ({@code MYSQL_CONNECT_RETRIES}), as
     * the service's own migrations wait ({@code spring.flyway.connect-retries} of the mysql
     * profile): 1 s apart, doubling up to {@link #CONNECT_RETRIES_INTERVAL_SECONDS}, about 9
     * minutes, a warning per attempt; an init container started beside its database waits
     * rather than failing into Kubernetes' restart backoff.
     */
    public static final int DEFAULT_CONNECT_RETRIES = 60;

    /** The longest wait between two of those attempts. */
    public static final int CONNECT_RETRIES_INTERVAL_SECONDS = 10;

    /**
     * Migrates the schema at {@code url} as {@code user}, trying up to {@code connectRetries}
     * more times while the database cannot be reached; returns what was applied.
     */
    public static MigrateResult migrate(String url, String user, String password, int connectRetries) {
        return Flyway.configure().dataSource(url, user, password).locations(LOCATION)
                .connectRetries(connectRetries).connectRetriesInterval(CONNECT_RETRIES_INTERVAL_SECONDS)
                .load().migrate();
    }

    public static void main(String[] args) {
        String url = required("MYSQL_URL");
        MigrateResult result = migrate(url, required("MYSQL_MIGRATION_USERNAME"), System.getenv().getOrDefault("MYSQL_MIGRATION_PASSWORD", ""),
                connectRetries());
        // A one-off step's output is its log: one line, no secrets.
        System.out.printf("schema at %s: %d migration(s) applied, now at version %s%n", url.replaceAll("\\?.*", ""),
                result.migrationsExecuted, result.targetSchemaVersion == null ? result.initialSchemaVersion : result.targetSchemaVersion);
    }

    private static int connectRetries() {
        String retries = System.getenv("MYSQL_CONNECT_RETRIES");
        if (retries == null || retries.isBlank()) {
            return DEFAULT_CONNECT_RETRIES;
        }
        try {
            return Integer.parseUnsignedInt(retries.strip());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("MYSQL_CONNECT_RETRIES must be a whole number of attempts, not '" + retries + "'");
        }
    }

    private static String required(String name) {
        String value = System.getenv(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(name + " must be set");
        }
        return value;
    }
}
