package com.supermarket.purchases.storage.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.broker.testing.TestServices;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository.StoreResult;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Purchases stored under an earlier schema read back whole, and redeliveries of them ignored,
 * after the migrations that follow, on the real test MariaDB in a database of its own.
 */
class SchemaMigrationsIT {

    @Test
    void purchasesStoredBeforeTheItemsMovedToJsonKeepTheirItemsInLineOrder() {
        List<Purchase> purchases = new ArrayList<>();
        for (int lines = 1; lines <= 100; lines += 33) {
            List<PurchaseItem> items = new ArrayList<>();
            for (int line = 0; line < lines; line++) {
                items.add(new PurchaseItem(100_000 - line, line + 1));
            }
            purchases.add(purchase(items));
        }
        migrateAcross("1", (jdbc, dataSource) ->
                new RowPerItemRepository(jdbc, new DataSourceTransactionManager(dataSource)).storeAll(purchases),
                (jdbc, repository) -> {
                    for (Purchase purchase : purchases) {
                        assertThat(repository.findById(purchase.purchaseId())).contains(purchase);
                    }
                    assertThat(repository.storeAll(purchases).duplicates()).as("redelivered after the migration")
                            .isEqualTo(purchases.size());
                });
    }

    @Test
    void purchasesClusteredByTheirIdBeforeAreFoundAndNewOnesAppend() {
        List<Purchase> before = List.of(purchase(List.of(new PurchaseItem(1, 2))), purchase(List.of(new PurchaseItem(3, 4))));
        List<Purchase> after = List.of(purchase(List.of(new PurchaseItem(5, 6))), purchase(List.of(new PurchaseItem(7, 8))));
        migrateAcross("2", (jdbc, dataSource) ->
                new MysqlPurchaseRepository(jdbc, new DataSourceTransactionManager(dataSource)).storeAll(before),
                (jdbc, repository) -> {
                    assertThat(jdbc.queryForList("SELECT COLUMN_NAME FROM information_schema.STATISTICS"
                            + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'purchase' AND INDEX_NAME = 'PRIMARY'",
                            String.class)).containsExactly("seq");
                    for (Purchase purchase : before) {
                        assertThat(repository.findById(purchase.purchaseId())).contains(purchase);
                    }
                    List<Purchase> redeliveredAndNew = new ArrayList<>(before);
                    redeliveredAndNew.addAll(after);
                    assertThat(repository.storeAll(redeliveredAndNew)).isEqualTo(new StoreResult(after.size(), before.size()));
                    assertThat(jdbc.queryForList("SELECT purchase_id FROM purchase ORDER BY seq DESC LIMIT 2", byte[].class))
                            .as("the new rows, last in the clustered order")
                            .containsExactly(MysqlPurchaseRepository.toBytes(after.get(1).purchaseId()),
                                    MysqlPurchaseRepository.toBytes(after.get(0).purchaseId()));
                });
    }

    private static Purchase purchase(List<PurchaseItem> items) {
        return new Purchase(UUID.randomUUID(), 7, 7001, LocalDate.of(2021, 1, 1), items,
                Instant.parse("2021-01-01T10:00:00.123456Z"));
    }

    /**
     * In a throw-away database: migrates to {@code version}, lets {@code storeBefore} write, then
     * applies the remaining migrations and hands the current repository to {@code checkAfter}.
     */
    private static void migrateAcross(String version, BiConsumer<JdbcTemplate, HikariDataSource> storeBefore,
                                      BiConsumer<JdbcTemplate, MysqlPurchaseRepository> checkAfter) {
        String database = "purchases_migration_" + UUID.randomUUID().toString().substring(0, 8);
        try (HikariDataSource dataSource = new HikariDataSource()) {
            TestServices.Database mariaDb = TestServices.mariaDb();
            dataSource.setJdbcUrl(mariaDb.jdbcUrl(database + "?createDatabaseIfNotExist=true"));
            dataSource.setUsername(mariaDb.username());
            dataSource.setPassword(mariaDb.password());
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            try {
                Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").target(version).load().migrate();
                storeBefore.accept(jdbc, dataSource);

                Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();

                checkAfter.accept(jdbc, new MysqlPurchaseRepository(jdbc, new DataSourceTransactionManager(dataSource)));
            } finally {
                jdbc.execute("DROP DATABASE " + database);
            }
        }
    }
}
