package com.supermarket.purchases.storage.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLRecoverableException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.transaction.TransactionSystemException;

class MysqlFailureClassificationTest {

    private final MysqlPurchaseRepository repository = new MysqlPurchaseRepository(null, null);

    @Test
    void aLostDatabaseIsTransient() {
        assertThat(repository.isTransient(new CannotGetJdbcConnectionException("pool timeout"))).isTrue();
        assertThat(repository.isTransient(new TransactionSystemException("JDBC rollback failed"))).isTrue();
        assertThat(repository.isTransient(new IllegalStateException("wrapped",
                new SQLRecoverableException("Communications link failure")))).isTrue();
    }

    @Test
    void aConstraintViolationIsPermanent() {
        assertThat(repository.isTransient(new DataIntegrityViolationException("too long",
                new SQLIntegrityConstraintViolationException("Data too long")))).isFalse();
    }
}
