package com.supermarket.purchases.storage.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.purchases.storage.WriteBenchmarkHarness;
import com.zaxxer.hikari.HikariDataSource;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * MariaDB layouts side by side, each in a database of its own (dropped after), with the
 * service's pool settings. Here, one row per item line (schema V1, {@link RowPerItemRepository}) and
 * one row per purchase with its items in a JSON column (the current schema,
 * {@link MysqlPurchaseRepository}), at batch sizes 1 (one transaction per purchase),
 * {@code -Dbenchmark.messageBatch} (a typical group-commit message: one transaction per message)
 * and {@code -Dbenchmark.batchSize}; below, the clustered key on a grown table. Runs alternate between the layouts so load on the shared
 * machine hits both alike. Not part of the normal build:
 * {@code ./mvnw -pl purchases-service -am -Pbenchmark test}.
 */
class MysqlWriteBenchmark {

    @Test
    void rowPerItemAgainstItemsAsJsonAtSeveralBatchSizes() throws Exception {
        int threads = WriteBenchmarkHarness.setting("threads", 4);
        int purchases = WriteBenchmarkHarness.setting("purchases", 20_000);
        int[] batchSizes = {1, WriteBenchmarkHarness.setting("messageBatch", 20), WriteBenchmarkHarness.setting("batchSize", 100)};
        try (Database rows = new Database("1"); Database json = new Database(null)) {
            RowPerItemRepository rowPerItem = new RowPerItemRepository(rows.jdbc, new DataSourceTransactionManager(rows.dataSource));
            MysqlPurchaseRepository itemsAsJson = new MysqlPurchaseRepository(json.jdbc, new DataSourceTransactionManager(json.dataSource));
            // Warm-up: JIT, pool, buffer pool.
            WriteBenchmarkHarness.run("mariadb row-per-item warm-up", rowPerItem::storeAll, 2_000, threads, 100);
            WriteBenchmarkHarness.run("mariadb items-json warm-up", itemsAsJson::storeAll, 2_000, threads, 100);
            long expected = 2_000;
            for (int batchSize : batchSizes) {
                int count = batchSize == 1 ? purchases / 4 : purchases;
                double row = WriteBenchmarkHarness.run("mariadb row-per-item", rowPerItem::storeAll, count, threads, batchSize);
                double asJson = WriteBenchmarkHarness.run("mariadb items-json", itemsAsJson::storeAll, count, threads, batchSize);
                assertThat(row).isPositive();
                assertThat(asJson).isPositive();
                expected += count;
            }
            assertThat(itemsAsJson.count()).isEqualTo(expected);
        }
    }

    /**
     * The clustering before {@code V3__append_only_clustered_key.sql} (by the purchase id) against
     * the current one (by a sequence, the id unique beside it) on a table that already holds
     * {@code -Dbenchmark.grownRows} purchases (2 million by default, about three times MariaDB's
     * default 128 MB buffer pool), with random ids as keyed purchases have, at
     * {@code messageBatch} purchases per transaction; two rounds, alternating. Filling the table
     * clustered by the id takes minutes.
     */
    @Test
    void clusteredByIdAgainstBySequenceOnAGrownTable() throws Exception {
        int grownRows = WriteBenchmarkHarness.setting("grownRows", 2_000_000);
        int threads = WriteBenchmarkHarness.setting("threads", 4);
        int purchases = WriteBenchmarkHarness.setting("purchases", 20_000);
        int batchSize = WriteBenchmarkHarness.setting("messageBatch", 20);
        try (Database byId = new Database("2"); Database bySequence = new Database(null)) {
            byId.fill(grownRows);
            bySequence.fill(grownRows);
            MysqlPurchaseRepository clusteredById = new MysqlPurchaseRepository(byId.jdbc, new DataSourceTransactionManager(byId.dataSource));
            MysqlPurchaseRepository clusteredBySequence =
                    new MysqlPurchaseRepository(bySequence.jdbc, new DataSourceTransactionManager(bySequence.dataSource));
            for (int round = 0; round < 2; round++) {
                WriteBenchmarkHarness.run("mariadb clustered by id", clusteredById::storeAll, purchases, threads, batchSize);
                WriteBenchmarkHarness.run("mariadb clustered by seq", clusteredBySequence::storeAll, purchases, threads, batchSize);
            }
            assertThat(clusteredById.count()).isEqualTo(grownRows + 2L * purchases);
            assertThat(clusteredBySequence.count()).isEqualTo(grownRows + 2L * purchases);
        }
    }

    /** A throw-away database migrated to {@code target} (null: the latest). */
    private static final class Database implements AutoCloseable {
        final String name = "purchases_bench_" + UUID.randomUUID().toString().substring(0, 8);
        final HikariDataSource dataSource = new HikariDataSource();
        final JdbcTemplate jdbc;

        Database(String target) {
            dataSource.setJdbcUrl("jdbc:mysql://127.0.0.1:3306/" + name + "?createDatabaseIfNotExist=true");
            dataSource.setUsername("root");
            dataSource.setPassword("");
            dataSource.setMaximumPoolSize(WriteBenchmarkHarness.setting("threads", 4) + 2);
            dataSource.addDataSourceProperty("rewriteBatchedStatements", "true");
            dataSource.addDataSourceProperty("cachePrepStmts", "true");
            var flyway = Flyway.configure().dataSource(dataSource).locations("classpath:db/migration");
            if (target != null) {
                flyway.target(target);
            }
            flyway.load().migrate();
            jdbc = new JdbcTemplate(dataSource);
        }

        /** Adds {@code rows} purchases with random ids in one statement (MariaDB's sequence engine). */
        void fill(int rows) {
            jdbc.update("INSERT INTO purchase (purchase_id, store_id, customer_id, purchase_date, accepted_at_us, item_count, items)"
                    + " SELECT UNHEX(MD5(CONCAT(seq, RAND()))), seq % 256 + 1, seq % 1000, '2021-01-01', seq, 5,"
                    + " '[[12345,3],[23456,1],[34567,2],[45678,5],[56789,1]]' FROM seq_1_to_" + rows);
        }

        @Override
        public void close() {
            try {
                jdbc.execute("DROP DATABASE " + name);
            } finally {
                dataSource.close();
            }
        }
    }
}
