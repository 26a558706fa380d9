package com.supermarket.purchases.storage.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Purchases stored with one row per item (schema V1) read back whole after the migration that
 * moves the items into a JSON column, on the real local MariaDB in a database of its own.
 */
class ItemsAsJsonMigrationIT {

    @Test
    void purchasesStoredBeforeTheMigrationKeepTheirItemsInLineOrder() {
        String database = "purchases_migration_" + UUID.randomUUID().toString().substring(0, 8);
        try (HikariDataSource dataSource = new HikariDataSource()) {
            dataSource.setJdbcUrl("jdbc:mysql://127.0.0.1:3306/" + database + "?createDatabaseIfNotExist=true");
            dataSource.setUsername("root");
            dataSource.setPassword("");
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            try {
                Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").target("1").load().migrate();
                List<Purchase> purchases = new ArrayList<>();
                for (int lines = 1; lines <= 100; lines += 33) {
                    List<PurchaseItem> items = new ArrayList<>();
                    for (int line = 0; line < lines; line++) {
                        items.add(new PurchaseItem(100_000 - line, line + 1));
                    }
                    purchases.add(new Purchase(UUID.randomUUID(), 7, 7001, LocalDate.of(2021, 1, 1), items,
                            Instant.parse("2021-01-01T10:00:00.123456Z")));
                }
                new RowPerItemRepository(jdbc, new DataSourceTransactionManager(dataSource)).storeAll(purchases);

                Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();

                MysqlPurchaseRepository repository = new MysqlPurchaseRepository(jdbc, new DataSourceTransactionManager(dataSource));
                for (Purchase purchase : purchases) {
                    assertThat(repository.findById(purchase.purchaseId())).contains(purchase);
                }
                assertThat(repository.storeAll(purchases).duplicates()).as("redelivered after the migration").isEqualTo(purchases.size());
            } finally {
                jdbc.execute("DROP DATABASE " + database);
            }
        }
    }
}
