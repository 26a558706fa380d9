-- Insert-heavy schema: one row per purchase, keyed by its id, plus one row per item line.
-- purchase_id is BINARY(16), not CHAR(36): 16 bytes instead of 36 (up to 144 under utf8mb4) in
-- the clustered key and in every item row, so more of the index stays in the buffer pool and
-- comparisons are plain memcmp. No foreign key from purchase_item: both rows are written in one
-- transaction by the only writer, and an FK would add an index lookup per item row.
-- accepted_at_us is epoch microseconds: Connector/J drops fractional seconds when it talks to
-- MariaDB (which it takes for MySQL 5.5), and a number has no time zone to get wrong.
CREATE TABLE purchase (
    purchase_id   BINARY(16)  NOT NULL,
    store_id      INT         NOT NULL,
    customer_id   INT         NOT NULL,
    purchase_date DATE        NOT NULL,
    accepted_at_us BIGINT     NOT NULL,
    item_count    SMALLINT    NOT NULL,
    PRIMARY KEY (purchase_id),
    KEY purchase_store_date (store_id, purchase_date)
) ENGINE = InnoDB;

-- Clustered by (purchase_id, line_no): a purchase's items sit together, and a redelivered
-- purchase's items collide on the key and are ignored.
CREATE TABLE purchase_item (
    purchase_id BINARY(16) NOT NULL,
    line_no     SMALLINT   NOT NULL,
    item_id     INT        NOT NULL,
    quantity    INT        NOT NULL,
    PRIMARY KEY (purchase_id, line_no)
) ENGINE = InnoDB;
