#!/usr/bin/env bash
# Makes sure the local services the platform and its tests need are up:
#   RabbitMQ with the rabbitmq_sharding and rabbitmq_management plugins, MariaDB/MySQL, and
#   Redis (purchase-api's idempotency store).
# RabbitMQ is the project's version as a container (LOCAL_BROKER=container, the default; on
# 127.0.0.1:5673, management 15673: scripts/lib/local-broker.sh), or the machine's own
# rabbitmq-server on 5672 (LOCAL_BROKER=host: Debian's package, 3.10 on bookworm).
# Installs what is missing from Debian's packages (needs root), starts whatever is down, enables
# the plugins, and waits until each answers. Safe to run again and again.
# Usage: scripts/local-services.sh [--help]
# Environment: LOCAL_BROKER, LOCAL_BROKER_* (scripts/lib/local-broker.sh), MYSQL_HOST (127.0.0.1),
#              MYSQL_PORT (3306), REDIS_HOST (127.0.0.1), REDIS_PORT (6379).
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

log() { printf '[local-services] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/local-broker.sh
source "$ROOT/scripts/lib/local-broker.sh"

wait_for() { # $1 = what, $2 = seconds, rest = the probe command
  local what="$1" seconds="$2"; shift 2
  for ((i = 0; i < seconds; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "$what did not come up within ${seconds}s"
}

install_if_missing() { # $1 = command, $2 = Debian package
  command -v "$1" >/dev/null 2>&1 && return 0
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1 \
    || die "$1 is missing; install the package $2 (e.g. sudo apt-get install $2)"
  log "installing $2"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}

management_url="http://127.0.0.1:$LOCAL_BROKER_MANAGEMENT_PORT"
mysql_host="${MYSQL_HOST:-127.0.0.1}"
mysql_port="${MYSQL_PORT:-3306}"
redis_host="${REDIS_HOST:-127.0.0.1}"
redis_port="${REDIS_PORT:-6379}"

# --- RabbitMQ --------------------------------------------------------------------------
if [[ "$LOCAL_BROKER" == container ]]; then
  local_broker_start
  log "RabbitMQ $(broker_version) up as the container $LOCAL_BROKER_NAME (AMQP 127.0.0.1:$LOCAL_BROKER_AMQP_PORT, management $management_url)"
else
  install_if_missing rabbitmq-server rabbitmq-server
  if ! rabbitmqctl -q status >/dev/null 2>&1; then
    log "starting RabbitMQ"
    rabbitmq-server -detached
  fi
  wait_for "RabbitMQ" 90 rabbitmqctl -q await_startup
  # Enabling is idempotent and takes effect on the running node.
  rabbitmq-plugins -q enable rabbitmq_sharding rabbitmq_management >/dev/null
  wait_for "the RabbitMQ management API" 60 curl -sf -u guest:guest "$management_url/api/overview"
  curl -sf -u guest:guest "$management_url/api/overview" | grep -q '"x-modulus-hash"' \
    || die "RabbitMQ has no x-modulus-hash exchange type after enabling rabbitmq_sharding"
  log "RabbitMQ $(broker_version) up (the machine's own), plugins rabbitmq_sharding and rabbitmq_management enabled"
fi

# --- MariaDB / MySQL ------------------------------------------------------------------
install_if_missing mariadbd mariadb-server
mysql_up() { mariadb-admin --protocol=tcp -h "$mysql_host" -P "$mysql_port" -uroot ping; }
if ! mysql_up >/dev/null 2>&1; then
  log "starting MariaDB"
  # mariadbd refuses to run as root; Debian's package owns its data directory as mysql. Started
  # directly, not by start-stop-daemon --exec: that takes any process whose executable path reads
  # /usr/sbin/mariadbd, a container's database included, for this machine's and starts nothing.
  install -d -o mysql -g mysql /run/mysqld
  setsid /usr/sbin/mariadbd --user=mysql >>/var/log/local-services-mariadb.log 2>&1 < /dev/null &
fi
wait_for "MariaDB" 60 mysql_up
# The local runs and tests connect as root over TCP without a password; Debian's package lets
# root in by its Unix socket only, so a fresh install is opened to loopback TCP as well.
root_tcp() { mariadb --protocol=tcp -h "$mysql_host" -P "$mysql_port" -uroot -e 'SELECT 1'; }
if ! root_tcp >/dev/null 2>&1 && [[ "$mysql_host" == 127.0.0.1 || "$mysql_host" == localhost ]]; then
  log "letting MariaDB's root in over loopback TCP without a password (local use only)"
  mariadb --protocol=socket -uroot -e \
    "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('')"
fi
root_tcp >/dev/null || die "MariaDB at $mysql_host:$mysql_port refuses root over TCP"
log "MariaDB up at $mysql_host:$mysql_port"

# --- Redis (7.0 or newer: purchase-api claims keys with SET ... NX GET) --------------------
install_if_missing redis-server redis-server
redis_up() { redis-cli -h "$redis_host" -p "$redis_port" ping | grep -q PONG; }
if ! redis_up >/dev/null 2>&1; then
  log "starting Redis"
  # Its snapshots in a folder of its own, not in whatever folder the script was run from.
  mkdir -p /var/lib/redis
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir /var/lib/redis --daemonize yes >/dev/null
fi
wait_for "Redis" 30 redis_up
redis_version="$(redis-cli -h "$redis_host" -p "$redis_port" info server | sed -n 's/^redis_version:\([0-9]*\).*/\1/p')"
[[ "${redis_version:-0}" -ge 7 ]] || die "Redis at $redis_host:$redis_port is version ${redis_version:-unknown}; purchase-api needs 7.0 or newer"
log "Redis up at $redis_host:$redis_port"
