package com.supermarket.purchases.storage.mysql;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.purchases.storage.PurchaseRepository;
import java.nio.ByteBuffer;
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

/**
 * MySQL / MariaDB store: one transaction per batch, with two explicit multi-row
 * {@code INSERT IGNORE} statements (purchases, then items). {@code INSERT IGNORE} on the primary
 * keys makes a redelivery a no-op, and the affected-row count of the purchase statement tells
 * exactly how many were new, which is how duplicates are counted (a JDBC batch rewritten by the
 * driver reports no per-row counts). Thread-safe: stateless over a pooled {@link JdbcTemplate}.
 */
@Repository
@Profile("mysql")
class MysqlPurchaseRepository implements PurchaseRepository {

    /** Rows per statement: keeps each statement well under max_allowed_packet and 65,535 placeholders. */
    private static final int ROWS_PER_STATEMENT = 1000;

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
            List<Object[]> itemRows = new ArrayList<>();
            for (Purchase purchase : purchases) {
                byte[] id = toBytes(purchase.purchaseId());
                List<PurchaseItem> items = purchase.items();
                for (int line = 0; line < items.size(); line++) {
                    itemRows.add(new Object[] {id, line, items.get(line).itemId(), items.get(line).quantity()});
                }
            }
            for (List<Object[]> chunk : chunks(itemRows, ROWS_PER_STATEMENT)) {
                insertRows("INSERT IGNORE INTO purchase_item (purchase_id, line_no, item_id, quantity) VALUES ", 4, chunk);
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
                    ChronoUnit.MICROS.between(Instant.EPOCH, p.acceptedAt()), p.items().size()});
        }
        return insertRows("INSERT IGNORE INTO purchase (purchase_id, store_id, customer_id, purchase_date, accepted_at_us, item_count) VALUES ",
                6, rows);
    }

    private int insertRows(String prefix, int columns, List<Object[]> rows) {
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
        byte[] id = toBytes(purchaseId);
        List<PurchaseItem> items = jdbc.query(
                "SELECT item_id, quantity FROM purchase_item WHERE purchase_id = ? ORDER BY line_no",
                (rs, n) -> new PurchaseItem(rs.getInt(1), rs.getInt(2)), id);
        return jdbc.query("SELECT store_id, customer_id, purchase_date, accepted_at_us FROM purchase WHERE purchase_id = ?",
                (rs, n) -> new Purchase(purchaseId, rs.getInt(1), rs.getInt(2), rs.getObject(3, LocalDate.class), items,
                        Instant.EPOCH.plus(rs.getLong(4), ChronoUnit.MICROS)), id).stream().findFirst();
    }

    @Override
    public void ping() {
        jdbc.queryForObject("SELECT 1", Integer.class);
    }

    @Override
    public boolean isTransient(RuntimeException failure) {
        // A lost or refused connection surfaces in many shapes: no connection from the pool, a
        // transaction that could not begin, commit or roll back, a communications link failure,
        // a lock wait or deadlock. Any of them anywhere in the chain makes the failure transient;
        // what is left (a constraint or syntax error) is about the data.
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException
                    || t instanceof DataAccessResourceFailureException
                    || t instanceof QueryTimeoutException
                    || t instanceof TransactionException
                    || t instanceof SQLTransientException
                    || t instanceof SQLRecoverableException
                    || t instanceof SQLNonTransientConnectionException) {
                return true;
            }
        }
        return false;
    }

    static byte[] toBytes(UUID id) {
        return ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array();
    }

    private static <T> List<List<T>> chunks(List<T> all, int size) {
        List<List<T>> chunks = new ArrayList<>();
        for (int from = 0; from < all.size(); from += size) {
            chunks.add(all.subList(from, Math.min(all.size(), from + size)));
        }
        return chunks;
    }

}
