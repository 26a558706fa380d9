#!/bin/bash
# Run once by the mysql image when it initialises an empty data directory
# (/docker-entrypoint-initdb.d): creates purchases-service's run-time user. The image itself
# creates MYSQL_USER with every privilege on MYSQL_DATABASE: that user owns the schema and only
# the one-off migrations (compose service purchases-migrations) log in as it. The service logs in
# as "purchases", which may read and insert rows and nothing else: no UPDATE, DELETE, CREATE,
# ALTER or DROP (docs/operations.md, "Service users and rights"; the grant is Migrations.RUNTIME_PRIVILEGES).
: "${MYSQL_PURCHASES_PASSWORD:?MYSQL_PURCHASES_PASSWORD must be set (see .env.example)}"
mysql --protocol=socket -uroot -p"$MYSQL_ROOT_PASSWORD" <<SQL
CREATE USER IF NOT EXISTS 'purchases'@'%' IDENTIFIED BY '${MYSQL_PURCHASES_PASSWORD//\'/\'\'}';
GRANT SELECT, INSERT ON \`${MYSQL_DATABASE}\`.* TO 'purchases'@'%';
SQL
