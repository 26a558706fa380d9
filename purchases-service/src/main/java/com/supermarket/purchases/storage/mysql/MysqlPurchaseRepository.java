package com.supermarket.purchases.storage.mysql;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.WireFormat;
import com.supermarket.purchases.storage.PurchaseRepository;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.springframework.context.annotation.Profile;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.JsonNode;

/**
 * MySQL / MariaDB store: one row per purchase, its item lines in a JSON column
 * ({@code [[itemId, quantity], ...]}), written one batch per transaction with explicit multi-row
 * {@code INSERT IGNORE} statements. The rows are clustered by an auto-increment sequence, so
 * they append; {@code INSERT IGNORE} on the unique purchase id makes a redelivery a no-op, and the affected-row count tells exactly how many were new, which is how duplicates
 * are counted (a JDBC batch rewritten by the driver reports no per-row counts). Thread-safe:
 * stateless over a pooled {@link JdbcTemplate}.
 */
@Repository
@Profile("mysql")
class MysqlPurchaseRepository implements PurchaseRepository {

    /** Rows per statement: keeps each statement well under max_allowed_packet and 65,535 placeholders. */
    static final int ROWS_PER_STATEMENT = 1000;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transaction;

    MysqlPurchaseRepository(JdbcTemplate jdbc, PlatformTransactionManager transactionManager) {
        this.jdbc = jdbc;
        this.transaction = new TransactionTemplate(transactionManager);
    }

    @Override
    public StoreResult storeAll(List<Purchase> purchases) {
        Integer inserted = transaction.execute(status -> {
            int newPurchases = 0;
            for (List<Purchase> chunk : chunks(purchases, ROWS_PER_STATEMENT)) {
                newPurchases += insertPurchases(chunk);
            }
            return newPurchases;
        });
        int stored = inserted == null ? 0 : inserted;
        return new StoreResult(stored, purchases.size() - stored);
    }

    private int insertPurchases(List<Purchase> purchases) {
        List<Object[]> rows = new ArrayList<>(purchases.size());
        for (Purchase p : purchases) {
            rows.add(new Object[] {toBytes(p.purchaseId()), p.storeId(), p.customerId(), p.date(),
                    ChronoUnit.MICROS.between(Instant.EPOCH, p.acceptedAt()), p.items().size(), itemsJson(p.items())});
        }
        return insertRows(jdbc, "INSERT IGNORE INTO purchase (purchase_id, store_id, customer_id, purchase_date, "
                + "accepted_at_us, item_count, items) VALUES ", 7, rows);
    }

    /** {@code [[itemId,quantity],...]}: compact, and built without a JSON library on the write path. */
    static String itemsJson(List<PurchaseItem> items) {
        StringBuilder json = new StringBuilder(2 + items.size() * 12).append('[');
        for (PurchaseItem item : items) {
            json.append(json.length() == 1 ? "[" : ",[").append(item.itemId()).append(',').append(item.quantity()).append(']');
        }
        return json.append(']').toString();
    }

    static List<PurchaseItem> parseItems(String json) {
        List<PurchaseItem> items = new ArrayList<>();
        for (JsonNode line : WireFormat.mapper().readTree(json)) {
            items.add(new PurchaseItem(line.get(0).intValue(), line.get(1).intValue()));
        }
        return items;
    }

    /** One multi-row {@code INSERT} of {@code rows} (each {@code columns} values); returns the affected rows. */
    static int insertRows(JdbcTemplate jdbc, String prefix, int columns, List<Object[]> rows) {
        String tuple = "(" + String.join(",", Collections.nCopies(columns, "?")) + ")";
        StringBuilder sql = new StringBuilder(prefix.length() + rows.size() * (tuple.length() + 1)).append(prefix);
        Object[] args = new Object[rows.size() * columns];
        for (int r = 0; r < rows.size(); r++) {
            sql.append(r == 0 ? "" : ",").append(tuple);
            System.arraycopy(rows.get(r), 0, args, r * columns, columns);
        }
        return jdbc.update(sql.toString(), args);
    }

    @Override
    public long count() {
        Long count = jdbc.queryForObject("SELECT COUNT(*) FROM purchase", Long.class);
        return count == null ? 0 : count;
    }

    @Override
    public Optional<Purchase> findById(UUID purchaseId) {
        return jdbc.query("SELECT store_id, customer_id, purchase_date, accepted_at_us, items FROM purchase WHERE purchase_id = ?",
                (rs, n) -> new Purchase(purchaseId, rs.getInt(1), rs.getInt(2), rs.getObject(3, LocalDate.class),
                        parseItems(rs.getString(5)), Instant.EPOCH.plus(rs.getLong(4), ChronoUnit.MICROS)), toBytes(purchaseId))
                .stream().findFirst();
    }

    @Override
    public void ping() {
        jdbc.queryForObject("SELECT 1", Integer.class);
    }

    @Override
    public Fault faultOf(RuntimeException failure) {
        SQLException sql = null;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            // A lost or refused connection surfaces in many shapes: no connection from the pool,
            // a transaction that could not begin, commit or roll back, a communications link
            // failure, a lock wait or deadlock, a timeout.
            if (t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException
                    || t instanceof DataAccessResourceFailureException
                    || t instanceof QueryTimeoutException
                    || t instanceof TransactionException
                    || t instanceof SQLTransientException
                    || t instanceof SQLRecoverableException
                    || t instanceof SQLNonTransientConnectionException) {
                return Fault.STORE;
            }
            if (sql == null && t instanceof SQLException e) {
                sql = e;
            }
        }
        return sql == null ? Fault.UNKNOWN : faultOf(sql.getErrorCode(), sql.getSQLState());
    }

    /** Whose fault a MySQL / MariaDB error is, by its error code and SQLSTATE. */
    static Fault faultOf(int errorCode, String sqlState) {
        String sqlClass = sqlState == null || sqlState.length() < 2 ? "" : sqlState.substring(0, 2);
        if (STORE_ERRORS.contains(errorCode) || STORE_CLASSES.contains(sqlClass)) {
            return Fault.STORE;
        }
        if (DATA_ERRORS.contains(errorCode) || DATA_CLASSES.contains(sqlClass)) {
            return Fault.DATA;
        }
        return Fault.UNKNOWN;
    }

    /**
     * SQLSTATE classes that are never one row's: connection (08), invalid transaction state, e.g.
     * a read-only transaction (25), authorization (28), transaction rollback (40), the statement's
     * syntax or access rules, e.g. a revoked grant or a missing table (42), interrupted (70).
     */
    private static final Set<String> STORE_CLASSES = Set.of("08", "25", "28", "40", "42", "70");

    /** Errors with which the server refuses every write alike, whose SQLSTATE says no more (often HY000). */
    private static final Set<Integer> STORE_ERRORS = Set.of(
            1290, // ER_OPTION_PREVENTS_STATEMENT: read_only, e.g. a replica after a failover
            1836, // ER_READ_ONLY_MODE
            1792, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
            1036, // ER_OPEN_AS_READONLY
            1021, // ER_DISK_FULL
            1114, // ER_RECORD_FILE_FULL
            1030, // ER_GET_ERRNO: the storage engine failed
            1015, 1016, 1017, 1034, 1194, 1195, // files that cannot be locked, opened or found; crashed tables
            1037, 1038, 1041, // out of memory
            1040, 1203, 1226, 1637, // too many connections, user resources or transactions
            1044, 1045, 1142, 1143, 1227, // access denied
            1364, // a column the service does not write has no default: the schema, for every row
            1180, 1181, // commit or rollback failed
            1205, 1213, // lock wait timeout, deadlock
            1053, 1317, 1927, 1969, 3024, 4031); // shutdown, interrupted, killed, statement timeouts, idle disconnect

    /** SQLSTATE classes of a row's data: a data exception (22), an integrity constraint (23). */
    private static final Set<String> DATA_CLASSES = Set.of("22", "23");

    /** Data errors whose SQLSTATE is HY000 on some servers. */
    private static final Set<Integer> DATA_ERRORS = Set.of(
            1366, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
            3819, // MySQL: a CHECK constraint
            4025); // MariaDB: a CHECK constraint

    static byte[] toBytes(UUID id) {
        return ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array();
    }

    static <T> List<List<T>> chunks(List<T> all, int size) {
        List<List<T>> chunks = new ArrayList<>();
        for (int from = 0; from < all.size(); from += size) {
            chunks.add(all.subList(from, Math.min(all.size(), from + size)));
        }
        return chunks;
    }

}
