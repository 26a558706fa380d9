package com.supermarket.purchases.storage.mysql;

import static com.supermarket.purchases.storage.mysql.MysqlPurchaseRepository.ROWS_PER_STATEMENT;
import static com.supermarket.purchases.storage.mysql.MysqlPurchaseRepository.chunks;
import static com.supermarket.purchases.storage.mysql.MysqlPurchaseRepository.insertRows;
import static com.supermarket.purchases.storage.mysql.MysqlPurchaseRepository.toBytes;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The write path of the schema before {@code V2__items_as_json.sql} (one row per purchase plus
 * one row per item line, Flyway target 1), kept as the benchmark's baseline. Writes only.
 */
final class RowPerItemRepository {

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transaction;

    RowPerItemRepository(JdbcTemplate jdbc, PlatformTransactionManager transactionManager) {
        this.jdbc = jdbc;
        this.transaction = new TransactionTemplate(transactionManager);
    }

    void storeAll(List<Purchase> purchases) {
        List<Object[]> purchaseRows = new ArrayList<>(purchases.size());
        List<Object[]> itemRows = new ArrayList<>();
        for (Purchase p : purchases) {
            byte[] id = toBytes(p.purchaseId());
            purchaseRows.add(new Object[] {id, p.storeId(), p.customerId(), p.date(),
                    ChronoUnit.MICROS.between(Instant.EPOCH, p.acceptedAt()), p.items().size()});
            List<PurchaseItem> items = p.items();
            for (int line = 0; line < items.size(); line++) {
                itemRows.add(new Object[] {id, line, items.get(line).itemId(), items.get(line).quantity()});
            }
        }
        transaction.executeWithoutResult(status -> {
            for (List<Object[]> chunk : chunks(purchaseRows, ROWS_PER_STATEMENT)) {
                insertRows(jdbc, "INSERT IGNORE INTO purchase (purchase_id, store_id, customer_id, purchase_date, "
                        + "accepted_at_us, item_count) VALUES ", 6, chunk);
            }
            for (List<Object[]> chunk : chunks(itemRows, ROWS_PER_STATEMENT)) {
                insertRows(jdbc, "INSERT IGNORE INTO purchase_item (purchase_id, line_no, item_id, quantity) VALUES ", 4, chunk);
            }
        });
    }
}
