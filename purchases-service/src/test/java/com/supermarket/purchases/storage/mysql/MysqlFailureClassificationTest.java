package com.supermarket.purchases.storage.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.purchases.storage.PurchaseRepository.Fault;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLRecoverableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.transaction.TransactionSystemException;

class MysqlFailureClassificationTest {

    private final MysqlPurchaseRepository repository = new MysqlPurchaseRepository(null, null);

    @Test
    void aLostDatabaseIsTheDatabases() {
        assertThat(repository.faultOf(new CannotGetJdbcConnectionException("pool timeout"))).isEqualTo(Fault.STORE);
        assertThat(repository.faultOf(new TransactionSystemException("JDBC rollback failed"))).isEqualTo(Fault.STORE);
        assertThat(repository.faultOf(new IllegalStateException("wrapped",
                new SQLRecoverableException("Communications link failure")))).isEqualTo(Fault.STORE);
    }

    /** Read-only after a failover, a full disk or table, a revoked grant: every purchase would fail alike. */
    @ParameterizedTest
    @CsvSource({
            "1290, HY000, The MariaDB server is running with the --read-only option",
            "1836, HY000, Running in read-only mode",
            "1792, 25006, Cannot execute statement in a READ ONLY transaction",
            "1114, HY000, The table 'purchase' is full",
            "1021, HY000, Disk full; waiting for someone to free some space",
            "1142, 42000, INSERT command denied to user 'purchases'@'10.0.0.1' for table 'purchase'",
            "1044, 42000, Access denied for user 'purchases'@'%' to database 'purchases'",
            "1045, 28000, Access denied for user 'purchases'@'10.0.0.1' (using password: YES)",
            "1227, 42000, Access denied; you need (at least one of) the SUPER privilege(s)",
            "1146, 42S02, Table 'purchases.purchase' doesn't exist"})
    void anErrorEveryWriteSharesIsTheDatabases(int code, String state, String message) {
        assertThat(repository.faultOf(new UncategorizedSQLException("insert", "INSERT IGNORE INTO purchase ...",
                new SQLException(message, state, code)))).isEqualTo(Fault.STORE);
    }

    @Test
    void aConstraintViolationIsTheRowsData() {
        assertThat(repository.faultOf(new DataIntegrityViolationException("too long",
                new SQLIntegrityConstraintViolationException("Data too long", "23000", 1048)))).isEqualTo(Fault.DATA);
    }

    /** A value out of range or too long, an incorrect value, a CHECK constraint: the row's own data. */
    @ParameterizedTest
    @CsvSource({
            "1264, 22003, Out of range value for column 'item_count' at row 1",
            "1406, 22001, Data too long for column 'items' at row 1",
            "1366, HY000, Incorrect integer value: 'x' for column 'store_id' at row 1",
            "3819, HY000, Check constraint 'items_json' is violated.",
            "4025, 23000, CONSTRAINT `purchase.items` failed for `purchases`.`purchase`"})
    void aDataErrorIsTheRows(int code, String state, String message) {
        assertThat(repository.faultOf(new UncategorizedSQLException("insert", "INSERT IGNORE INTO purchase ...",
                new SQLException(message, state, code)))).isEqualTo(Fault.DATA);
    }

    /** Not known to be the database's nor a row's: a purchase failing with it is proven bad only when others are stored. */
    @Test
    void anUnknownErrorIsNeither() {
        assertThat(repository.faultOf(new UncategorizedSQLException("insert", "INSERT IGNORE INTO purchase ...",
                new SQLException("store 666 is closed", "45000", 1644)))).isEqualTo(Fault.UNKNOWN);
        assertThat(repository.faultOf(new IllegalArgumentException("no SQL error at all"))).isEqualTo(Fault.UNKNOWN);
    }
}
