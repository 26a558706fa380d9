#!/bin/bash
# The official mysql/mariadb images' entrypoint contract, for MariaDB: options alone mean the
# server; run as root, the server runs as user mysql. On an empty data directory, a first start
# initialises it from MYSQL_ROOT_PASSWORD (or MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_RANDOM_ROOT_PASSWORD,
# and root@MYSQL_ROOT_HOST, default '%'), MYSQL_DATABASE, MYSQL_USER/MYSQL_PASSWORD (all privileges
# on that database) and the files in /docker-entrypoint-initdb.d (*.sh sourced, or run when
# executable; *.sql, *.sql.gz, *.sql.xz fed to the client), on a temporary server that does not
# listen on TCP, so a TCP health check passes only once the real server is up. MARIADB_* variables
# stand for the MYSQL_* ones. The server then replaces this shell: TERM stops it cleanly.
set -eo pipefail
shopt -s nullglob

[[ "${1:-}" == -* ]] && set -- mariadbd "$@"
if [[ "$1" != mariadbd && "$1" != mysqld ]]; then
    exec "$@"
fi
if [[ "$(id -u)" == 0 ]]; then
    find /var/lib/mysql /run/mysqld \! -user mysql -exec chown mysql:mysql '{}' +
    exec gosu mysql "$BASH_SOURCE" "$@"
fi

for name in ROOT_PASSWORD ROOT_HOST DATABASE USER PASSWORD; do
    mysql_name=MYSQL_$name mariadb_name=MARIADB_$name
    export "$mysql_name=${!mysql_name:-${!mariadb_name:-}}"
done
export MYSQL_ALLOW_EMPTY_PASSWORD="${MYSQL_ALLOW_EMPTY_PASSWORD:-${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}}"
export MYSQL_RANDOM_ROOT_PASSWORD="${MYSQL_RANDOM_ROOT_PASSWORD:-${MARIADB_RANDOM_ROOT_PASSWORD:-}}"
log() { echo "$(date -u '+%F %T') 0 [Note] [Entrypoint]: $*"; }

# The server's own view of its options (this also fails early on a bad option).
options="$("$@" --verbose --help 2>&1)" || { echo "$options" >&2; exit 1; }
option() { awk -v key="$1" '/^[^ \t]/ && $1 == key { print $2; exit }' <<<"$options"; }
datadir="$(option datadir)" socket="$(option socket)"

if [[ ! -d "$datadir/mysql" ]]; then
    if [[ -z "$MYSQL_ROOT_PASSWORD" && -z "$MYSQL_ALLOW_EMPTY_PASSWORD" && -z "$MYSQL_RANDOM_ROOT_PASSWORD" ]]; then
        echo 'error: database is uninitialized and password option is not specified' >&2
        echo '  You need to specify one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD and MYSQL_RANDOM_ROOT_PASSWORD' >&2
        exit 1
    fi
    if [[ -n "$MYSQL_RANDOM_ROOT_PASSWORD" ]]; then
        MYSQL_ROOT_PASSWORD="$(head -c 24 /dev/urandom | base64 | tr -d '+/=')"
        export MYSQL_ROOT_PASSWORD
        log "GENERATED ROOT PASSWORD: $MYSQL_ROOT_PASSWORD"
    fi
    log 'Initializing database files'
    mariadb-install-db --datadir="$datadir" --rpm --auth-root-authentication-method=normal \
        --skip-test-db --skip-name-resolve "${@:2}" >/dev/null
    log 'Starting temporary server'
    "$@" --skip-networking --socket="$socket" --skip-log-bin &
    server=$!
    client=(mariadb --protocol=socket --socket="$socket" -uroot)
    for _ in $(seq 60); do
        "${client[@]}" -e 'SELECT 1' >/dev/null 2>&1 && break
        kill -0 "$server" 2>/dev/null || { echo 'error: the temporary server did not start' >&2; exit 1; }
        sleep 0.5
    done
    # Named time zones, as the official images load them (MYSQL_INITDB_SKIP_TZINFO skips it).
    if [[ -z "${MYSQL_INITDB_SKIP_TZINFO:-${MARIADB_INITDB_SKIP_TZINFO:-}}" ]]; then
        mariadb-tzinfo-to-sql /usr/share/zoneinfo 2>/dev/null | "${client[@]}" mysql
    fi
    string() { local value="${1//\\/\\\\}"; printf "'%s'" "${value//\'/\\\'}"; }
    identifier() { printf '`%s`' "${1//\`/\`\`}"; }
    root_host="${MYSQL_ROOT_HOST:-%}"
    sql="SET SESSION sql_log_bin = 0;
        DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost');
        DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';
        FLUSH PRIVILEGES;
        SET PASSWORD FOR 'root'@'localhost' = PASSWORD($(string "$MYSQL_ROOT_PASSWORD"));"
    if [[ "$root_host" != localhost ]]; then
        sql+="CREATE USER 'root'@$(string "$root_host") IDENTIFIED BY $(string "$MYSQL_ROOT_PASSWORD");
            GRANT ALL ON *.* TO 'root'@$(string "$root_host") WITH GRANT OPTION;"
    fi
    [[ -n "$MYSQL_DATABASE" ]] && sql+="CREATE DATABASE IF NOT EXISTS $(identifier "$MYSQL_DATABASE");"
    if [[ -n "$MYSQL_USER" && -n "$MYSQL_PASSWORD" ]]; then
        sql+="CREATE USER $(string "$MYSQL_USER")@'%' IDENTIFIED BY $(string "$MYSQL_PASSWORD");"
        [[ -n "$MYSQL_DATABASE" ]] && sql+="GRANT ALL ON $(identifier "$MYSQL_DATABASE").* TO $(string "$MYSQL_USER")@'%';"
    fi
    "${client[@]}" <<<"$sql"
    # From here on root has its password; the client reads it from a file descriptor, never argv.
    run_sql() {
        mariadb --defaults-extra-file=<(printf '[client]\npassword=%s\n' "$MYSQL_ROOT_PASSWORD") \
            --protocol=socket --socket="$socket" -uroot ${MYSQL_DATABASE:+--database="$MYSQL_DATABASE"}
    }
    for file in /docker-entrypoint-initdb.d/*; do
        case "$file" in
            *.sh) log "running $file"; if [[ -x "$file" ]]; then "$file"; else . "$file"; fi ;;
            *.sql) log "running $file"; run_sql <"$file" ;;
            *.sql.gz) log "running $file"; gunzip -c "$file" | run_sql ;;
            *.sql.xz) log "running $file"; xzcat "$file" | run_sql ;;
            *) log "ignoring $file" ;;
        esac
    done
    log 'Stopping temporary server'
    kill "$server" && wait "$server"
    log 'MariaDB init process done. Ready for start up.'
fi

exec "$@"
