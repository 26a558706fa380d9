# Shared by scripts/faults.sh and scripts/soak.sh (sourced, not run): the platform's links through
# fault proxies (the contract's FaultProxy, one process per link, steered over a control port),
# the run's throw-away RabbitMQ vhost and MySQL database, inject (one fault, while load runs) and
# restore_servers (sets back what db-read-only and broker-alarm change on the machine's servers;
# idempotent, so a script calls it whenever a run ends).
# Expects, by the time a function is called: scripts/lib/platform.sh sourced, ROOT, RUN_DIR, JAVA,
# NAME (names the database user of db-read-only). inject reads the fault parameters below, which
# a script's options may change after sourcing this file.
# Environment: FAULTS_PROXY_PORT (default 17670): the proxies listen on it and the next five ports
# (broker link, its control port, database link, its control port, idempotency store link, its
# control port); PROXY_JAVA_OPTS.

# The fault parameters: seconds a killed service stays down, a link stays cut or frozen (or a
# server setting changed, or a cluster node down), loss or latency lasts; the fraction of chunks
# held by *-loss; the milliseconds added by *-latency.
down_for=3
outage_for=8
degrade_for=10
loss=0.05
latency_ms=50

PROXY_PORT="${FAULTS_PROXY_PORT:-17670}"
BROKER_PROXY_PORT="$PROXY_PORT"
BROKER_CONTROL_PORT=$((PROXY_PORT + 1))
DB_PROXY_PORT=$((PROXY_PORT + 2))
DB_CONTROL_PORT=$((PROXY_PORT + 3))
REDIS_PROXY_PORT=$((PROXY_PORT + 4))
REDIS_CONTROL_PORT=$((PROXY_PORT + 5))
# A small JVM for each proxy: it only copies bytes.
PROXY_JAVA_OPTS="${PROXY_JAVA_OPTS:--Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
# MariaDB's greeting now comes through the proxy's JVM, which a busy machine may not schedule
# within the default 3 s at purchases-service's start.
export MYSQL_CONNECTION_TIMEOUT_MS="${MYSQL_CONNECTION_TIMEOUT_MS:-10000}"

VHOST=""
DATABASE=""
DB_USER=""
root_sql() { mysql -uroot -h127.0.0.1 -e "$1"; }
drop_sandbox() {
  [[ -z "$VHOST" ]] || rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
  [[ -z "$DATABASE" ]] || root_sql "DROP DATABASE IF EXISTS \`$DATABASE\`" >/dev/null 2>&1 || true
  [[ -z "$DB_USER" ]] || root_sql "DROP USER IF EXISTS '$DB_USER'@'%'" >/dev/null 2>&1 || true
  VHOST="" DATABASE="" DB_USER=""
}

# $1 = vhost, $2 = database: what an interrupted earlier run left under these names goes first
# (drop_sandbox forgets the names), then the vhost is created for the services (RABBITMQ_VHOST);
# purchases-service creates the database.
open_sandbox() {
  VHOST="$1" DATABASE="$2"
  drop_sandbox
  VHOST="$1" DATABASE="$2"
  rabbitmqctl -q add_vhost "$VHOST" >/dev/null
  rabbitmqctl -q set_permissions -p "$VHOST" guest ".*" ".*" ".*" >/dev/null
  export RABBITMQ_VHOST="$VHOST"
}

# read_only spares users with SUPER, such as root: for db-read-only purchases-service writes as a
# user of the run's own with the rights it needs (SELECT, INSERT), root only migrates. Creates
# DATABASE first.
restrict_database_user() {
  DB_USER="h_${NAME//-/_}"
  local password; password="$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  root_sql "CREATE DATABASE \`$DATABASE\`; DROP USER IF EXISTS '$DB_USER'@'%';
    CREATE USER '$DB_USER'@'%' IDENTIFIED BY '$password';
    GRANT SELECT, INSERT ON \`$DATABASE\`.* TO '$DB_USER'@'%'"
  export MYSQL_USERNAME="$DB_USER" MYSQL_PASSWORD="$password" MYSQL_MIGRATION_USERNAME=root MYSQL_MIGRATION_PASSWORD=
}

# The settings db-read-only and broker-alarm change on the machine's servers, set back at the
# end of the fault and whenever a run ends (restore_servers is idempotent).
BROKER_WATERMARK=""
restore_servers() {
  root_sql "SET GLOBAL read_only = OFF" >/dev/null 2>&1 || true
  if [[ -n "$BROKER_WATERMARK" ]]; then
    rabbitmqctl -q set_vm_memory_high_watermark "$BROKER_WATERMARK" >/dev/null 2>&1 || true
    BROKER_WATERMARK=""
  fi
}

pid_of() { # $1 = name given to start_process: its latest pid
  local i pid=""
  for ((i = 0; i < ${#STARTED_NAMES[@]}; i++)); do
    [[ "${STARTED_NAMES[$i]}" == "$1" ]] && pid="${STARTED_PIDS[$i]}"
  done
  echo "$pid"
}

# $1 = name, $2 = listen port, $3 = target host:port, $4 = control port: a FaultProxy process.
start_proxy() {
  require_free_port "$2" "$1"
  require_free_port "$4" "$1's control"
  # shellcheck disable=SC2086 # options are words
  start_process "$1" "$RUN_DIR/$1.log" "$JAVA" $PROXY_JAVA_OPTS -cp "$(jar_of contract)" com.supermarket.contract.testing.FaultProxy "$2" "$3" "$4"
  wait_until "$1" 30 port_in_use "$4"
}

# The services reach the machine's broker through the broker link's proxy ...
proxy_broker_link() {
  start_proxy broker-proxy "$BROKER_PROXY_PORT" 127.0.0.1:5672 "$BROKER_CONTROL_PORT"
  unset RABBITMQ_ADDRESSES
  export RABBITMQ_HOST=127.0.0.1 RABBITMQ_PORT="$BROKER_PROXY_PORT"
}

# ... the database (DATABASE) through the database link's proxy ...
proxy_database_link() {
  start_proxy db-proxy "$DB_PROXY_PORT" 127.0.0.1:3306 "$DB_CONTROL_PORT"
  MYSQL_URL="jdbc:mysql://127.0.0.1:$DB_PROXY_PORT/$DATABASE?createDatabaseIfNotExist=true&connectTimeout=10000"
}

# ... and the idempotency store ($1 = its port, default the machine's Redis) through its link's proxy.
proxy_redis_link() {
  start_proxy redis-proxy "$REDIS_PROXY_PORT" "127.0.0.1:${1:-6379}" "$REDIS_CONTROL_PORT"
  export IDEMPOTENCY_REDIS_URL="redis://127.0.0.1:$REDIS_PROXY_PORT/0"
}

# $1 = control port, rest = one command (see FaultProxy): sends it, logs the proxy's answer.
proxy_ctl() {
  local port="$1" answer; shift
  answer="$(exec 3<>"/dev/tcp/127.0.0.1/$port" && echo "$*" >&3 && read -r -t 10 line <&3 && echo "$line")" \
    || die "the fault proxy on control port $port did not answer '$*'"
  log "fault proxy :$port: $* -> $answer"
  [[ "$answer" == ok* ]] || die "the fault proxy refused '$*': $answer"
}

# $1 = fault. Strikes while the load client runs; returns once the platform is whole again.
inject() {
  local service pid port node control=""
  case "$1" in
    broker-*) control="$BROKER_CONTROL_PORT" ;;
    db-*) control="$DB_CONTROL_PORT" ;;
    redis-*) control="$REDIS_CONTROL_PORT" ;;
  esac
  case "$1" in
    none | late-retry) return 0 ;;
    kill-*)
      service="${1#kill-}"
      pid="$(pid_of "$service")"
      log "fault: kill -9 $service (pid $pid)"
      kill -KILL "$pid"
      wait "$pid" 2>/dev/null || true
      sleep "$down_for"
      mv "$RUN_DIR/$service.log" "$RUN_DIR/$service-killed-$(date +%s).log"
      case "$service" in
        purchase-api) start_purchase_api; port="$API_MANAGEMENT_PORT" ;;
        store-service) start_store_service; port="$STORE_MANAGEMENT_PORT" ;;
        purchases-service) start_purchases_service mysql; port="$PURCHASES_MANAGEMENT_PORT" ;;
      esac
      wait_ready "$service" "$port" "${STARTED_PIDS[-1]}"
      log "fault: $service is back"
      ;;
    broker-restart | db-outage)
      log "fault: every ${1%%-*} link cut, new ones refused for ${outage_for}s"
      proxy_ctl "$control" cut "$outage_for"
      sleep "$outage_for"
      ;;
    node-loss)
      node="$("$ROOT/scripts/rabbitmq-cluster.sh" most-leaders 2>/dev/null || echo 1)"
      log "fault: cluster node sm$node killed, down for ${outage_for}s"
      "$ROOT/scripts/rabbitmq-cluster.sh" stop-node "$node"
      sleep "$outage_for"
      "$ROOT/scripts/rabbitmq-cluster.sh" start-node "$node" >>"$RUN_DIR/cluster.log" 2>&1 \
        || die "cluster node sm$node did not start again; see $RUN_DIR/cluster.log"
      log "fault: sm$node is back"
      ;;
    db-read-only)
      log "fault: the database refuses every write (read_only) for ${outage_for}s"
      root_sql "SET GLOBAL read_only = ON"
      sleep "$outage_for"
      restore_servers
      ;;
    broker-alarm)
      # The broker's own setting, read back so that exactly it is restored (e.g. 0.4).
      BROKER_WATERMARK="$(rabbitmqctl -q eval 'vm_memory_monitor:get_vm_memory_high_watermark().' | tr -d '\r\n')"
      [[ "$BROKER_WATERMARK" =~ ^[0-9.]+$ ]] || die "cannot read the broker's memory watermark (got '$BROKER_WATERMARK')"
      log "fault: a memory alarm on the broker (watermark $BROKER_WATERMARK -> 0.000001) for ${outage_for}s"
      rabbitmqctl -q set_vm_memory_high_watermark 0.000001 >/dev/null
      sleep "$outage_for"
      restore_servers
      ;;
    redis-freeze)
      log "fault: the idempotency store's link frozen for ${outage_for}s"
      proxy_ctl "$control" freeze
      sleep "$outage_for"
      proxy_ctl "$control" restore
      ;;
    *-loss | *-latency)
      if [[ "$1" == *-loss ]]; then proxy_ctl "$control" loss "$loss"; else proxy_ctl "$control" latency "$latency_ms"; fi
      sleep "$degrade_for"
      proxy_ctl "$control" restore
      ;;
  esac
}
