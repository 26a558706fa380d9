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
 * Batched vs single-row writes into the local MariaDB (a database of its own, dropped after),
 * with the service's schema and pool settings. Not part of the normal build:
 * {@code ./mvnw -pl purchases-service -am -Pbenchmark test}.
 */
class MysqlWriteBenchmark {

    @Test
    void batchedWritesAgainstSingleRowWrites() throws Exception {
        String database = "purchases_bench_" + UUID.randomUUID().toString().substring(0, 8);
        int threads = WriteBenchmarkHarness.setting("threads", 4);
        int purchases = WriteBenchmarkHarness.setting("purchases", 20_000);
        int batchSize = WriteBenchmarkHarness.setting("batchSize", 100);
        try (HikariDataSource dataSource = new HikariDataSource()) {
            dataSource.setJdbcUrl("jdbc:mysql://127.0.0.1:3306/" + database + "?createDatabaseIfNotExist=true");
            dataSource.setUsername("root");
            dataSource.setPassword("");
            dataSource.setMaximumPoolSize(threads + 2);
            dataSource.addDataSourceProperty("rewriteBatchedStatements", "true");
            dataSource.addDataSourceProperty("cachePrepStmts", "true");
            Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            MysqlPurchaseRepository repository = new MysqlPurchaseRepository(jdbc, new DataSourceTransactionManager(dataSource));
            try {
                // Warm-up: JIT, pool, buffer pool.
                WriteBenchmarkHarness.run("mariadb warm-up", repository, 2_000, threads, batchSize);
                double single = WriteBenchmarkHarness.run("mariadb single-row", repository, purchases / 4, threads, 1);
                double batched = WriteBenchmarkHarness.run("mariadb batched", repository, purchases, threads, batchSize);
                assertThat(repository.count()).isEqualTo(2_000 + purchases / 4 + purchases);
                assertThat(single).isPositive();
                assertThat(batched).isPositive();
            } finally {
                jdbc.execute("DROP DATABASE " + database);
            }
        }
    }
}
