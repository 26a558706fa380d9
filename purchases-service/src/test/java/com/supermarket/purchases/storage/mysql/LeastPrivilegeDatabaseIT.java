package com.supermarket.purchases.storage.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.tools.proxy.TcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The split of database users on the real test MariaDB, in a database and with users of its
 * own (dropped afterwards): {@link Migrations} creates the schema as the schema-owning user, and
 * the service's repository, as a user granted {@link Migrations#RUNTIME_PRIVILEGES} only, stores
 * and reads purchases but may not create, alter or drop anything, nor update or delete rows.
 */
class LeastPrivilegeDatabaseIT {

    /** The versions under {@code db/migration}. */
    private static final int MIGRATIONS = 3;

    private static final TestServices.Database MARIADB = TestServices.mariaDb();

    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String database = "purchases_it_priv_" + suffix;
    private final String migrator = "it_migr_" + suffix;
    private final String runtime = "it_run_" + suffix;
    private final String migratorPassword = UUID.randomUUID().toString();
    private final String runtimePassword = UUID.randomUUID().toString();

    @BeforeEach
    void createDatabaseAndUsers() throws SQLException {
        asRoot("CREATE DATABASE " + database,
                "CREATE USER '" + migrator + "'@'%' IDENTIFIED BY '" + migratorPassword + "'",
                "GRANT ALL PRIVILEGES ON " + database + ".* TO '" + migrator + "'@'%'",
                "CREATE USER '" + runtime + "'@'%' IDENTIFIED BY '" + runtimePassword + "'",
                "GRANT " + Migrations.RUNTIME_PRIVILEGES + " ON " + database + ".* TO '" + runtime + "'@'%'");
    }

    @AfterEach
    void dropDatabaseAndUsers() throws SQLException {
        asRoot("DROP DATABASE IF EXISTS " + database, "DROP USER IF EXISTS '" + migrator + "'@'%'",
                "DROP USER IF EXISTS '" + runtime + "'@'%'");
    }

    @Test
    void theMigrationUserMakesTheSchemaAndTheRuntimeUserOnlyStoresAndReads() throws SQLException {
        assertThatThrownBy(() -> Migrations.migrate(url(), runtime, runtimePassword, 0))
                .as("the runtime user migrates").hasStackTraceContaining("denied");
        assertThat(Migrations.migrate(url(), migrator, migratorPassword, 0).migrationsExecuted).isEqualTo(MIGRATIONS);

        SimpleDriverDataSource runtimeData = new SimpleDriverDataSource(DriverManager.getDriver(url()), url(), runtime, runtimePassword);
        MysqlPurchaseRepository repository = new MysqlPurchaseRepository(new JdbcTemplate(runtimeData),
                new DataSourceTransactionManager(runtimeData));
        Purchase purchase = new Purchase(UUID.randomUUID(), 7, 7001, LocalDate.of(2021, 1, 1),
                List.of(new PurchaseItem(101, 2)), Instant.now().truncatedTo(ChronoUnit.MILLIS));
        assertThat(repository.storeAll(List.of(purchase)).stored()).isEqualTo(1);
        assertThat(repository.storeAll(List.of(purchase)).duplicates()).as("a redelivery").isEqualTo(1);
        assertThat(repository.count()).isEqualTo(1);
        assertThat(repository.findById(purchase.purchaseId())).contains(purchase);
        repository.ping();

        try (Connection connection = runtimeData.getConnection()) {
            for (String refused : List.of(
                    "CREATE TABLE extra (id INT PRIMARY KEY)",
                    "ALTER TABLE purchase ADD COLUMN extra INT",
                    "CREATE INDEX purchase_extra ON purchase (customer_id)",
                    "DROP TABLE purchase",
                    "TRUNCATE TABLE purchase",
                    "UPDATE purchase SET store_id = 8",
                    "DELETE FROM purchase",
                    "DROP DATABASE " + database)) {
                assertThatThrownBy(() -> execute(connection, refused)).as(refused)
                        .isInstanceOf(SQLException.class).hasMessageContaining("denied");
            }
        }
        assertThat(repository.findById(purchase.purchaseId())).as("untouched").contains(purchase);
    }

    /**
     * The one-off migrations (the chart's init container) wait for a database that does not
     * answer yet, as the service does: here one that refuses every connection for its first 2 s.
     */
    @Test
    void theMigrationsWaitForADatabaseThatDoesNotAnswerYet() {
        try (TcpProxy starting = new TcpProxy(MARIADB.host(), MARIADB.port())) {
            starting.cut(Duration.ofSeconds(2));

            assertThat(Migrations.migrate(url(starting.port()), migrator, migratorPassword, 5).migrationsExecuted)
                    .isEqualTo(MIGRATIONS);
        }
    }

    private String url() {
        return MARIADB.jdbcUrl(database);
    }

    private String url(int port) {
        return "jdbc:mysql://" + MARIADB.host() + ":" + port + "/" + database;
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static void asRoot(String... statements) throws SQLException {
        try (Connection connection = DriverManager.getConnection(MARIADB.jdbcUrl(""), MARIADB.username(), MARIADB.password())) {
            for (String sql : statements) {
                execute(connection, sql);
            }
        }
    }
}
